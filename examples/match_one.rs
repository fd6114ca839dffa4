//! Match-One: the showcase, a small puzzle game after Entitas' Match-One,
//! that plays itself.
//!
//! A board of 8 x 9 cells holds coloured pieces and a few blockers. A click
//! destroys the piece under it; the pieces above it fall down (blockers stay
//! put, and hold up what is above them); new pieces of random colours fill
//! the cells left empty; the score counts the pieces destroyed.
//!
//! What it shows, declarations first, then the systems in the order a
//! frame runs them:
//! - two declared contexts, `Game` (the board) and `Input` (clicks), each
//!   with its own components; `Blocker` and `Destroyed` are flags, `Score`
//!   and `Screen` unique components;
//! - an `EntityIndex` keyed on board position, `Board`: "what is at (3, 4)?"
//!   is one lookup, for the click, for falling and for filling;
//! - `ProcessClick`, a reactive system over two contexts: it runs for the
//!   clicks added to `Input` and flags the piece under each `Destroyed` in
//!   `Game`, borrowing both contexts at once;
//! - `DestroyFlagged`, which finds the flagged pieces with a query and
//!   destroys them through a `CommandBuffer` (the query borrows the context);
//! - `Fall` and `Fill`, reactive systems on pieces leaving the board: their
//!   collector kept the cell each piece left, so they work on those columns
//!   only; `KeepScore`, reactive on `Destroyed` flags; `Render`, reactive on
//!   pieces that appeared or moved;
//! - `AutoPlay`, the player: after each frame it clicks a random piece;
//! - fallible systems: every phase that can fail is a `try_` phase using
//!   `?`, and a failure names the system;
//! - nested features over `Contexts` (`with_in` runs a system of one
//!   context among them), and the timing table they keep, printed at the end
//!   with `--timings`.
//!
//! Randomness comes from a small generator seeded with `--seed`, so a game
//! repeats exactly: `--headless` prints a plain transcript (each click, what
//! was destroyed, what fell, what was filled, the score, the board) and
//! nothing else, the same bytes for the same seed and turns, which
//! `tests/match_one.rs` compares across two runs. The per-system timing
//! table differs from run to run: it is printed only with `--timings`.
//!
//! ```text
//! cargo run --release --example match_one                      # plays 20 turns in colour
//! cargo run --release --example match_one -- --play            # you click: type `x y`
//! cargo run --release --example match_one -- --headless --seed 7 --turns 30
//! cargo run --release --example match_one -- --timings         # and the timing table
//! ```

use std::fmt::{self, Write as _};
use std::io::{self, BufRead, IsTerminal, Write};
use std::time::Duration;

use reactecs::prelude::*;
use reactecs::system::Timings;

// ---------------------------------------------------------------------------
// Contexts and components
// ---------------------------------------------------------------------------

reactecs::context!(pub Game, pub Input);

/// The board's width, in columns.
pub const WIDTH: i32 = 8;
/// The board's height, in rows.
pub const HEIGHT: i32 = 9;

/// A cell of the board: column `x` (0 at the left), row `y` (0 at the top).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    /// The column.
    pub x: i32,
    /// The row; pieces fall towards higher rows.
    pub y: i32,
}

/// A piece, of a colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece(pub Colour);

/// A cell that never moves and cannot be clicked: pieces rest on it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Blocker;

/// Marked for destruction (by a click), destroyed by `DestroyFlagged`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Destroyed;

/// The number of pieces destroyed so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Score(pub u32);

/// The text of the frame being made: systems write lines, the main loop
/// takes them.
#[derive(Debug, Default)]
pub struct Screen(pub String);

/// A click on a cell, in the `Input` context.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Click(pub Position);

reactecs::component!(Game: Position, Piece, flag Blocker, flag Destroyed, unique Score, unique Screen);
reactecs::component!(Input: Click);

/// The colours of pieces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Colour {
    /// `R`
    Red,
    /// `G`
    Green,
    /// `Y`
    Yellow,
    /// `B`
    Blue,
    /// `M`
    Magenta,
}

impl Colour {
    const ALL: [Colour; 5] = {
        use Colour::*;
        [Red, Green, Yellow, Blue, Magenta]
    };

    /// The letter of the plain board.
    fn letter(self) -> char {
        ['R', 'G', 'Y', 'B', 'M'][self as usize]
    }
}

impl fmt::Display for Colour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = ["red", "green", "yellow", "blue", "magenta"][*self as usize];
        f.write_str(name)
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({},{})", self.x, self.y)
    }
}

/// What a cell holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tile {
    /// Nothing (only between a destroy and the next fill).
    Empty,
    /// A blocker.
    Blocker,
    /// A piece of that colour.
    Piece(Colour),
}

/// The board index: board position -> the entity there (one per cell).
pub type Board = IndexId<EntityIndex<Position>>;

/// What a fallible helper returns: any error, as systems do.
pub type Fallible<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// The entity at `cell` (a piece or a blocker), if any, from the index.
fn entity_at(game: &Context, board: Board, cell: Position) -> Result<Option<Entity>, Error> {
    Ok(game.index(board)?.get(&cell).first().copied())
}

/// The piece at `cell`, if there is one (not a blocker), and its colour.
fn piece_at(game: &Context, board: Board, cell: Position) -> Result<Option<(Entity, Colour)>, Error> {
    Ok(entity_at(game, board, cell)?.and_then(|e| game.get::<Piece>(e).ok().map(|piece| (e, piece.0))))
}

/// Writes a line on the frame's screen.
fn say(game: &mut Context, line: fmt::Arguments<'_>) -> SystemResult {
    let holder = game
        .unique_entity::<Screen>()
        .ok_or("no `Screen`: `CreateBoard` sets it")?;
    let mut screen = game.get_mut::<Screen>(holder)?;
    writeln!(screen.0, "{line}")?;
    Ok(())
}

/// A small deterministic random number generator (splitmix64): the same
/// seed gives the same game.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    fn below(&mut self, n: i32) -> i32 {
        (self.next_u64() % n as u64) as i32
    }

    /// A generator of its own, so that each system draws its own numbers.
    fn fork(&mut self) -> Rng {
        Rng(self.next_u64())
    }
}

// ---------------------------------------------------------------------------
// Input: clicks become `Destroyed` flags
// ---------------------------------------------------------------------------

/// Runs for the clicks added to `Input` and flags the piece under each one
/// `Destroyed` in `Game`; a click on a blocker, or off the board, destroys
/// nothing. Its collector is in one context, its work in two: a
/// `ReactiveSystem<Contexts>` gets all of `Contexts`.
struct ProcessClick {
    board: Board,
    clicks: u32,
}

impl ReactiveSystem<Contexts> for ProcessClick {
    fn trigger(&mut self, contexts: &mut Contexts) -> Vec<CollectorId> {
        vec![
            contexts
                .context_mut::<Input>()
                .add_collector(Matcher::all_of::<Click>().added()),
        ]
    }

    fn try_execute(&mut self, contexts: &mut Contexts, clicks: &[ContextEntity]) -> SystemResult {
        let (game, input) = contexts.get_many_mut::<(Game, Input)>()?;
        for click in clicks {
            let Click(cell) = *input.get::<Click>(click.entity)?;
            input.destroy_entity(click.entity)?; // used up
            self.clicks += 1;
            let n = self.clicks;
            match piece_at(game, self.board, cell)? {
                Some((piece, colour)) => {
                    game.set_flag::<Destroyed>(piece, true)?;
                    say(game, format_args!("click {n} at {cell}: {colour} destroyed"))?;
                }
                None => say(game, format_args!("click {n} at {cell}: no piece there"))?,
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Board: set up, destroy, fall, fill
// ---------------------------------------------------------------------------

/// Sets the game up, once: the score, the screen, and the blockers (about
/// one cell in ten below the top two rows, where the seed says).
struct CreateBoard {
    rng: Rng,
}

impl System for CreateBoard {
    fn try_initialize(&mut self, game: &mut Context) -> SystemResult {
        game.set_unique(Score(0))?;
        game.set_unique(Screen::default())?;
        for y in 2..HEIGHT {
            for x in 0..WIDTH {
                if self.rng.below(10) == 0 {
                    game.create_entity_with((Position { x, y }, Blocker))?;
                }
            }
        }
        Ok(())
    }
}

/// Destroys the entities flagged `Destroyed`. The query that finds them
/// borrows the context, so the destroys are recorded in a `CommandBuffer`
/// (kept, so its memory is reused) and played back after the loop.
#[derive(Default)]
struct DestroyFlagged {
    commands: CommandBuffer,
}

impl System for DestroyFlagged {
    fn try_execute(&mut self, game: &mut Context) -> SystemResult {
        for (entity, _) in game.query::<(Entity, &Destroyed)>().iter() {
            self.commands.destroy_entity(entity);
        }
        self.commands.playback(game)?;
        Ok(())
    }
}

/// The trigger of `Fall` and `Fill`: pieces that left the board (were
/// destroyed), keeping the cell each one left. A trigger that collects
/// removals hands its systems destroyed entities too (as Entitas does):
/// here they are all destroyed, and only the cells they left matter.
fn left_the_board() -> CollectorSpec {
    Matcher::all_of::<(Piece, Position)>()
        .removed()
        .keep_removed::<Position>()
}

/// The columns that `pieces` left, each once, from left to right, as
/// `collector` kept them.
fn columns_left(game: &mut Context, collector: Option<CollectorId>, pieces: &[Entity]) -> Fallible<Vec<i32>> {
    let collector = game.collector(collector.ok_or("`trigger` runs before `execute`")?)?;
    let cells = collector.removed::<Position>();
    let mut columns = Vec::new();
    for &piece in pieces {
        columns.push(cells.get(piece).ok_or("the collector keeps the cell left")?.x);
    }
    columns.sort_unstable();
    columns.dedup();
    Ok(columns)
}

/// Lets the pieces above a hole fall into it: in each column a piece left,
/// bottom up, every piece moves down to the lowest free cell above the
/// blocker (or floor) below it. A move is a `replace` of its `Position`, so
/// the board index follows it, and `Render` sees it.
struct Fall {
    board: Board,
    left: Option<CollectorId>,
}

impl ReactiveSystem for Fall {
    fn trigger(&mut self, game: &mut Context) -> CollectorId {
        *self.left.insert(game.add_collector(left_the_board()))
    }

    fn try_execute(&mut self, game: &mut Context, left: &[Entity]) -> SystemResult {
        let mut fell = Vec::new();
        for x in columns_left(game, self.left, left)? {
            let mut free = HEIGHT - 1; // the lowest cell a piece can fall to
            for y in (0..HEIGHT).rev() {
                let from = Position { x, y };
                let Some(entity) = entity_at(game, self.board, from)? else {
                    continue; // a hole: `free` stays below it
                };
                if game.has::<Blocker>(entity) {
                    free = y - 1;
                    continue;
                }
                if y != free {
                    let to = Position { x, y: free };
                    game.replace(entity, to)?;
                    fell.push(format!("{} {from}->{to}", game.get::<Piece>(entity)?.0));
                }
                free -= 1;
            }
        }
        if !fell.is_empty() {
            say(game, format_args!("  fell: {}", fell.join(", ")))?;
        }
        Ok(())
    }
}

/// Puts a new piece of a random colour in every empty cell: the whole
/// board at the start, then the columns pieces left (after `Fall`, their
/// empty cells are the top of each stretch between blockers).
struct Fill {
    board: Board,
    rng: Rng,
    left: Option<CollectorId>,
}

impl Fill {
    fn fill_column(&mut self, game: &mut Context, x: i32, filled: &mut Vec<String>) -> Result<(), Error> {
        for y in 0..HEIGHT {
            let cell = Position { x, y };
            if entity_at(game, self.board, cell)?.is_none() {
                let colour = Colour::ALL[self.rng.below(Colour::ALL.len() as i32) as usize];
                game.create_entity_with((cell, Piece(colour)))?;
                filled.push(format!("{colour} {cell}"));
            }
        }
        Ok(())
    }
}

impl ReactiveSystem for Fill {
    fn trigger(&mut self, game: &mut Context) -> CollectorId {
        *self.left.insert(game.add_collector(left_the_board()))
    }

    fn try_initialize(&mut self, game: &mut Context) -> SystemResult {
        for x in 0..WIDTH {
            self.fill_column(game, x, &mut Vec::new())?;
        }
        Ok(())
    }

    fn try_execute(&mut self, game: &mut Context, left: &[Entity]) -> SystemResult {
        let mut filled = Vec::new();
        for x in columns_left(game, self.left, left)? {
            self.fill_column(game, x, &mut filled)?;
        }
        say(game, format_args!("  filled: {}", filled.join(", ")))
    }
}

// ---------------------------------------------------------------------------
// Score and view
// ---------------------------------------------------------------------------

/// Adds the pieces flagged `Destroyed` since its last run to the score.
struct KeepScore;

impl ReactiveSystem for KeepScore {
    fn trigger(&mut self, game: &mut Context) -> CollectorId {
        game.add_collector(Matcher::all_of::<(Piece, Destroyed)>().added())
    }

    /// They were destroyed since they were flagged; they still count.
    fn include_destroyed(&self) -> bool {
        true
    }

    fn try_execute(&mut self, game: &mut Context, destroyed: &[Entity]) -> SystemResult {
        let Score(score) = *game.unique::<Score>().ok_or("no `Score`: `CreateBoard` sets it")?;
        game.set_unique(Score(score + u32::try_from(destroyed.len())?))?;
        Ok(())
    }
}

/// Draws the score and the board when pieces appeared or moved (and only
/// then): as letters, or in colour, with the cells that changed since the
/// last drawing in bright colours.
struct Render {
    colour: bool,
}

impl ReactiveSystem for Render {
    fn trigger(&mut self, game: &mut Context) -> CollectorId {
        game.add_collector(Matcher::all_of::<Position>().added())
    }

    fn try_execute(&mut self, game: &mut Context, changed: &[Entity]) -> SystemResult {
        let mut tiles = [[Tile::Empty; WIDTH as usize]; HEIGHT as usize];
        let mut bright = [[false; WIDTH as usize]; HEIGHT as usize];
        for (cell, piece, blocker) in game.query::<(&Position, Option<&Piece>, Option<&Blocker>)>().iter() {
            tiles[cell.y as usize][cell.x as usize] = match (piece, blocker) {
                (Some(piece), _) => Tile::Piece(piece.0),
                (None, Some(_)) => Tile::Blocker,
                (None, None) => Tile::Empty,
            };
        }
        for &entity in changed {
            let cell = game.get::<Position>(entity)?;
            bright[cell.y as usize][cell.x as usize] = true;
        }

        let score = game.unique::<Score>().ok_or("no `Score`: `CreateBoard` sets it")?.0;
        let mut text = format!("score {score}\n   ");
        for x in 0..WIDTH {
            write!(text, " {x}")?;
        }
        for (y, row) in tiles.iter().enumerate() {
            write!(text, "\n{y:2} ")?;
            for (x, &tile) in row.iter().enumerate() {
                text.push(' ');
                self.draw(&mut text, tile, bright[y][x])?;
            }
        }
        say(game, format_args!("{text}\n"))
    }
}

impl Render {
    fn draw(&self, text: &mut String, tile: Tile, bright: bool) -> fmt::Result {
        match (self.colour, tile) {
            (false, Tile::Empty) => text.push('.'),
            (false, Tile::Blocker) => text.push('#'),
            (false, Tile::Piece(colour)) => text.push(colour.letter()),
            (true, Tile::Empty) => text.push(' '),
            (true, Tile::Blocker) => text.push_str("\x1b[90m■\x1b[0m"),
            (true, Tile::Piece(colour)) => {
                // 31..=35 are the colours, 91..=95 their bright versions.
                let code = 31 + colour as u8 + if bright { 60 } else { 0 };
                write!(text, "\x1b[{code}m●\x1b[0m")?;
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// The player
// ---------------------------------------------------------------------------

/// The self-playing player: at the end of each frame, looks at the board
/// and clicks a random piece, for the next frame to process, until it has
/// made its clicks. Reads `Game`, writes `Input`: it borrows both at once.
struct AutoPlay {
    board: Board,
    rng: Rng,
    clicks_left: u32,
}

impl System<Contexts> for AutoPlay {
    fn try_execute(&mut self, contexts: &mut Contexts) -> SystemResult {
        if self.clicks_left == 0 {
            return Ok(());
        }
        let (game, input) = contexts.get_many_mut::<(Game, Input)>()?;
        for _ in 0..1000 {
            let cell = Position {
                x: self.rng.below(WIDTH),
                y: self.rng.below(HEIGHT),
            };
            if piece_at(game, self.board, cell)?.is_some() {
                input.create_entity_with(Click(cell))?;
                self.clicks_left -= 1;
                return Ok(());
            }
        }
        Err("no piece to click on the board".into())
    }
}

// ---------------------------------------------------------------------------
// The game: contexts, index and features
// ---------------------------------------------------------------------------

/// Who clicks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Player {
    /// `AutoPlay`, for this many clicks.
    Auto {
        /// The clicks it makes.
        clicks: u32,
    },
    /// Whoever calls [`MatchOne::click`].
    Human,
}

/// A game of Match-One: both contexts, the board index, and the frame
/// (every system, in running order).
pub struct MatchOne {
    contexts: Contexts,
    board: Board,
    frame: Feature<Contexts>,
}

impl MatchOne {
    /// A game from `seed`, initialized (blockers placed, board filled); the
    /// first [`frame`](MatchOne::frame) draws it. `colour`: draw with ANSI
    /// colours rather than letters.
    pub fn new(seed: u64, player: Player, colour: bool) -> Fallible<MatchOne> {
        let mut contexts = Contexts::new();
        let board = contexts
            .context_mut::<Game>()
            .add_index(EntityIndex::new("Board", |cell: &Position| *cell))?;
        let mut rng = Rng(seed);

        // One frame, in features: input, board, score, view, player.
        // Reactive systems come after the systems whose changes they react
        // to, so they see them in the same frame.
        let mut frame = Feature::new("Match-One")
            .with(Feature::new("Input").with(MultiReactive::new(ProcessClick { board, clicks: 0 })))
            .with(
                Feature::new("Board")
                    .with_in(Game, CreateBoard { rng: rng.fork() })
                    .with_in(Game, DestroyFlagged::default())
                    .with_in(Game, Reactive::new(Fall { board, left: None }))
                    .with_in(
                        Game,
                        Reactive::new(Fill {
                            board,
                            rng: rng.fork(),
                            left: None,
                        }),
                    ),
            )
            .with(Feature::new("Score").with_in(Game, Reactive::new(KeepScore)))
            .with(Feature::new("View").with_in(Game, Reactive::new(Render { colour })));
        if let Player::Auto { clicks } = player {
            let rng = rng.fork();
            frame.add(Feature::new("Player").with(AutoPlay {
                board,
                rng,
                clicks_left: clicks,
            }));
        }
        // Makes every reactive system's collector first, so `Render` collects
        // the board that `CreateBoard` and `Fill` set up.
        frame.try_initialize(&mut contexts)?;
        Ok(MatchOne { contexts, board, frame })
    }

    /// Runs one frame (`execute`, then `cleanup`): processes the clicks made
    /// since the last one, and returns what the systems wrote (the first
    /// frame draws the board).
    pub fn frame(&mut self) -> Fallible<String> {
        self.frame.try_execute(&mut self.contexts)?;
        self.frame.try_cleanup(&mut self.contexts)?;
        let game = self.game_mut();
        let holder = game.unique_entity::<Screen>().ok_or("no `Screen`")?;
        let mut screen = game.get_mut::<Screen>(holder)?;
        Ok(std::mem::take(&mut screen.0))
    }

    /// Clicks `cell`, for the next frame to process.
    pub fn click(&mut self, cell: Position) -> Result<(), Error> {
        self.contexts.context_mut::<Input>().create_entity_with(Click(cell))?;
        Ok(())
    }

    /// What `cell` holds.
    pub fn tile(&self, cell: Position) -> Result<Tile, Error> {
        let game = self.game();
        Ok(match entity_at(game, self.board, cell)? {
            None => Tile::Empty,
            Some(entity) => game
                .get::<Piece>(entity)
                .map_or(Tile::Blocker, |piece| Tile::Piece(piece.0)),
        })
    }

    /// The `Game` context.
    pub fn game(&self) -> &Context {
        self.contexts.context::<Game>()
    }

    /// The `Game` context, mutably.
    pub fn game_mut(&mut self) -> &mut Context {
        self.contexts.context_mut::<Game>()
    }

    /// The `Input` context.
    pub fn input(&self) -> &Context {
        self.contexts.context::<Input>()
    }

    /// The board index of the `Game` context.
    pub fn board(&self) -> Board {
        self.board
    }

    /// How long each system took, feature by feature.
    pub fn timings(&self) -> Timings<'_> {
        self.frame.timings()
    }

    /// Ends the game: every system's `teardown` (reactive systems let go of
    /// their collectors).
    pub fn teardown(&mut self) -> Fallible<()> {
        self.frame.try_teardown(&mut self.contexts)?;
        Ok(())
    }
}

/// Plays `turns` clicks of `AutoPlay`: the frame that draws the first
/// board, then one frame per click, each frame's text given to `show`.
fn self_play(game: &mut MatchOne, turns: u32, mut show: impl FnMut(&str) -> io::Result<()>) -> Fallible<()> {
    for _ in 0..=turns {
        show(&game.frame()?)?;
    }
    Ok(())
}

/// The first line of a transcript.
fn title(seed: u64, turns: u32) -> String {
    format!("Match-One: seed {seed}, {turns} turns\n")
}

/// A self-playing game of `turns` clicks from `seed`, as plain text: each
/// click, what it destroyed, what fell, what was filled, the score and the
/// board. The same arguments give the same transcript.
pub fn run_headless(seed: u64, turns: u32) -> Fallible<String> {
    let mut game = MatchOne::new(seed, Player::Auto { clicks: turns }, false)?;
    let mut transcript = title(seed, turns);
    self_play(&mut game, turns, |text| {
        transcript.push_str(text);
        Ok(())
    })?;
    game.teardown()?;
    Ok(transcript)
}

// ---------------------------------------------------------------------------
// The program
// ---------------------------------------------------------------------------

/// The command line: `--headless`, `--play`, `--seed N`, `--turns K`,
/// `--timings`.
struct Options {
    headless: bool,
    play: bool,
    seed: u64,
    turns: u32,
    timings: bool,
}

impl Options {
    fn parse(mut args: impl Iterator<Item = String>) -> Fallible<Options> {
        let mut options = Options {
            headless: false,
            play: false,
            seed: 1,
            turns: 20,
            timings: false,
        };
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--headless" => options.headless = true,
                "--play" => options.play = true,
                "--seed" => options.seed = args.next().ok_or("`--seed` takes a number")?.parse()?,
                "--turns" => options.turns = args.next().ok_or("`--turns` takes a number")?.parse()?,
                "--timings" => options.timings = true,
                other => {
                    return Err(format!(
                        "unknown argument `{other}`: try --headless, --play, --seed N, --turns K, --timings"
                    )
                    .into());
                }
            }
        }
        if options.headless && options.play {
            return Err("`--headless` plays by itself: leave out `--play`".into());
        }
        Ok(options)
    }
}

/// Reads clicks (`x y`) from standard input until `q` or its end.
fn play_interactively(game: &mut MatchOne, out: &mut impl Write) -> Fallible<()> {
    write!(out, "{}", game.frame()?)?;
    let mut line = String::new();
    loop {
        write!(out, "click a piece, `x y` (`q` quits): ")?;
        out.flush()?;
        line.clear();
        if io::stdin().lock().read_line(&mut line)? == 0 || line.trim() == "q" {
            writeln!(out)?;
            return Ok(());
        }
        let mut numbers = line.split_whitespace().map(str::parse::<i32>);
        let cell = match (numbers.next(), numbers.next(), numbers.next()) {
            (Some(Ok(x)), Some(Ok(y)), None) => Position { x, y },
            _ => {
                writeln!(out, "two numbers, please: a column and a row")?;
                continue;
            }
        };
        match game.tile(cell)? {
            Tile::Piece(_) => {
                game.click(cell)?;
                write!(out, "{}", game.frame()?)?;
            }
            Tile::Blocker => writeln!(out, "{cell} is a blocker")?,
            Tile::Empty => writeln!(out, "no piece at {cell}")?,
        }
    }
}

fn main() -> Fallible<()> {
    let terminal = io::stdout().is_terminal();
    run(std::env::args().skip(1), terminal, &mut io::stdout().lock())
}

/// The program, given its arguments (without the program name), whether
/// standard output is a terminal, and where to write: with `--headless`,
/// the transcript alone (the same bytes for the same `--seed` and
/// `--turns`); the timing table after the game only with `--timings`.
pub fn run(args: impl Iterator<Item = String>, terminal: bool, out: &mut impl Write) -> Fallible<()> {
    let options = Options::parse(args)?;
    // Colours, redrawn in place at a watchable pace, only on a terminal.
    let terminal = !options.headless && terminal;
    let player = if options.play {
        Player::Human
    } else {
        Player::Auto { clicks: options.turns }
    };
    let mut game = MatchOne::new(options.seed, player, terminal)?;
    if options.play {
        play_interactively(&mut game, out)?;
    } else if terminal {
        write!(out, "\x1b[2J")?; // clear the screen once
        self_play(&mut game, options.turns, |text| {
            // Home, each line cleared to its end, the rest of the screen cleared.
            write!(out, "\x1b[H{}\x1b[J", text.replace('\n', "\x1b[K\n"))?;
            out.flush()?;
            std::thread::sleep(Duration::from_millis(150));
            Ok(())
        })?;
    } else {
        if options.headless {
            write!(out, "{}", title(options.seed, options.turns))?;
        }
        self_play(&mut game, options.turns, |text| write!(out, "{text}"))?;
    }
    game.teardown()?;
    // The timings are not the same from run to run: only when asked for.
    if options.timings {
        writeln!(out, "{}", game.timings())?;
    }
    Ok(())
}
