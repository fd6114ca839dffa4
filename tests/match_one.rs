//! The Match-One example, played: its transcript repeats for a seed, and
//! every turn keeps the rules (one click, one piece destroyed and scored,
//! the pieces above fall, the board full again, one entity per cell in the
//! board index).
//!
//! The example file is compiled in as a module, so the game tested is the
//! one `cargo run --example match_one` plays.

#[path = "../examples/match_one.rs"]
#[expect(
    dead_code,
    reason = "the example's `main`, interactive play and terminal drawing are not tested here"
)]
mod match_one;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use match_one::{Destroyed, HEIGHT, MatchOne, Player, Position, Score, Tile, WIDTH, run, run_headless};
use reactecs::prelude::*;

type Fallible = Result<(), Box<dyn std::error::Error + Send + Sync>>;

#[test]
fn the_same_seed_gives_the_same_transcript() -> Fallible {
    let first = run_headless(7, 30)?;
    let second = run_headless(7, 30)?;
    assert_eq!(first, second);
    assert!(first.contains("click 30 at "), "all 30 clicks are in it");
    Ok(())
}

/// What the program writes for `args` (`cargo run --example match_one --
/// args`, standard output not a terminal), through the example's own `run`.
fn program(args: &[&str]) -> Result<Vec<u8>, Box<dyn std::error::Error + Send + Sync>> {
    let mut out = Vec::new();
    run(args.iter().map(|arg| arg.to_string()), false, &mut out)?;
    Ok(out)
}

#[test]
fn the_headless_program_prints_the_same_bytes_for_a_seed_and_the_game_alone() -> Fallible {
    let args = ["--headless", "--seed", "7"];
    let first = program(&args)?;
    let second = program(&args)?;
    assert_eq!(first, second, "two runs, one seed: the same bytes");
    // The game alone: the transcript of 20 turns (the default), no timings.
    assert_eq!(String::from_utf8(first)?, run_headless(7, 20)?);
    assert_eq!(
        program(&["--headless", "--seed", "7", "--turns", "30"])?,
        run_headless(7, 30)?.into_bytes()
    );
    // The timing table is there only when asked for, after the game.
    let timed = String::from_utf8(program(&["--headless", "--seed", "7", "--timings"])?)?;
    let table = timed.strip_prefix(&run_headless(7, 20)?).expect("the game first");
    assert!(table.contains("Match-One") && table.contains("KeepScore"), "{table}");
    Ok(())
}

#[test]
fn different_seeds_give_different_games() -> Fallible {
    assert_ne!(run_headless(7, 10)?, run_headless(8, 10)?);
    Ok(())
}

#[test]
fn the_transcript_is_plain_text_with_each_click_its_refill_and_a_board_per_frame() -> Fallible {
    let turns = 12;
    let transcript = run_headless(3, turns)?;
    assert!(transcript.starts_with("Match-One: seed 3, 12 turns\n"));
    assert!(!transcript.contains('\x1b'), "no escape codes");
    for click in 1..=turns {
        let line = transcript
            .lines()
            .find(|line| line.starts_with(&format!("click {click} at ")))
            .unwrap_or_else(|| panic!("click {click} is reported"));
        assert!(line.ends_with(" destroyed"), "{line}");
    }
    assert_eq!(transcript.matches("  filled: ").count(), turns as usize);
    // The first board, then one per click, each scored and HEIGHT rows high.
    let scores: Vec<&str> = transcript.lines().filter(|line| line.starts_with("score ")).collect();
    let expected: Vec<String> = (0..=turns).map(|score| format!("score {score}")).collect();
    assert_eq!(scores, expected);
    let rows = transcript.lines().filter(|line| is_board_row(line)).count();
    assert_eq!(rows, (turns as usize + 1) * HEIGHT as usize);
    Ok(())
}

/// A row of a plain board: its number, then one letter or `#` per column.
fn is_board_row(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let numbered = words.next().is_some_and(|word| word.parse::<i32>().is_ok());
    let cells: Vec<&str> = words.collect();
    numbered && cells.len() == WIDTH as usize && cells.iter().all(|cell| ["R", "G", "Y", "B", "M", "#"].contains(cell))
}

#[test]
fn every_click_destroys_one_piece_and_the_score_counts_the_pieces_destroyed() -> Fallible {
    let turns = 25;
    let mut game = MatchOne::new(11, Player::Auto { clicks: turns }, false)?;
    let destroyed = Arc::new(AtomicUsize::new(0));
    let counter = destroyed.clone();
    game.game_mut().subscribe(move |event: &ContextEvent<'_>| {
        if let ContextEvent::EntityDestroyed { .. } = event {
            counter.fetch_add(1, Ordering::Relaxed);
        }
    });

    game.frame()?; // draws the first board; `AutoPlay` clicks
    assert_eq!(game.game().unique::<Score>(), Some(&Score(0)));
    for turn in 1..=turns {
        game.frame()?;
        let score = game.game().unique::<Score>().ok_or("a score")?.0;
        assert_eq!(score as usize, destroyed.load(Ordering::Relaxed), "turn {turn}");
        assert_eq!(score, turn, "one piece per click");
        // This turn's click is used up; `AutoPlay` made the next one.
        assert_eq!(game.input().len(), usize::from(turn < turns), "turn {turn}");
    }
    // `AutoPlay` made its clicks: nothing more happens.
    assert_eq!(game.frame()?, "");
    assert_eq!(game.game().unique::<Score>(), Some(&Score(turns)));
    game.teardown()?;
    Ok(())
}

#[test]
fn after_every_turn_the_board_is_full_with_one_entity_per_cell_in_the_index() -> Fallible {
    let turns = 25;
    let mut game = MatchOne::new(5, Player::Auto { clicks: turns }, false)?;
    for _ in 0..=turns {
        game.frame()?;
        let context = game.game();
        context.check_invariants()?;
        let board = context.index(game.board())?;
        for y in 0..HEIGHT {
            for x in 0..WIDTH {
                assert_eq!(board.get(&Position { x, y }).len(), 1, "one entity at ({x},{y})");
            }
        }
        // Every entity with a position is on the board, in a cell of its own.
        assert_eq!(context.query::<&Position>().count(), (WIDTH * HEIGHT) as usize);
        assert_eq!(context.query::<&Destroyed>().count(), 0, "flagged pieces are gone");
        game.input().check_invariants()?;
    }
    Ok(())
}

/// What column `x` holds, top to bottom.
fn column(game: &MatchOne, x: i32) -> Result<Vec<Tile>, Error> {
    (0..HEIGHT).map(|y| game.tile(Position { x, y })).collect()
}

#[test]
fn pieces_above_the_destroyed_one_fall_a_cell_down_to_the_blocker_above_and_the_top_is_refilled() -> Fallible {
    let mut game = MatchOne::new(7, Player::Human, false)?;
    game.frame()?;
    // A piece with at least one piece above it and a blocker above those,
    // so what rests on the blocker must stay.
    let mut found = None;
    for x in 0..WIDTH {
        let tiles = column(&game, x)?;
        for blocker in 0..HEIGHT - 2 {
            let stretch = (blocker + 1..HEIGHT).take_while(|&y| matches!(tiles[y as usize], Tile::Piece(_)));
            if tiles[blocker as usize] == Tile::Blocker && stretch.count() >= 2 {
                found = Some((x, blocker + 2, blocker, tiles.clone()));
            }
        }
    }
    let (x, clicked, blocker, before) = found.ok_or("seed 7 has such a column")?;

    game.click(Position { x, y: clicked })?;
    let text = game.frame()?;
    assert!(text.contains(&format!("click 1 at ({x},{clicked}): ")), "{text}");
    let after = column(&game, x)?;
    for y in 0..HEIGHT {
        let (now, was) = (after[y as usize], before[y as usize]);
        if y <= blocker || y > clicked {
            assert_eq!(now, was, "({x},{y}) does not change");
        } else if y == blocker + 1 {
            assert!(matches!(now, Tile::Piece(_)), "({x},{y}) is refilled");
        } else {
            assert_eq!(now, before[y as usize - 1], "({x},{y}) got the piece above it");
        }
    }
    assert_eq!(game.game().unique::<Score>(), Some(&Score(1)));
    Ok(())
}

#[test]
fn a_click_on_a_blocker_or_off_the_board_destroys_nothing() -> Fallible {
    let mut game = MatchOne::new(7, Player::Human, false)?;
    game.frame()?;
    let blocker = (0..WIDTH * HEIGHT)
        .map(|i| Position {
            x: i % WIDTH,
            y: i / WIDTH,
        })
        .find(|&cell| game.tile(cell).is_ok_and(|tile| tile == Tile::Blocker))
        .ok_or("seed 7 has blockers")?;
    game.click(blocker)?;
    game.click(Position { x: WIDTH, y: 0 })?;
    let text = game.frame()?;
    assert_eq!(text.matches("no piece there").count(), 2, "{text}");
    assert!(!text.contains("score"), "nothing moved: no redraw");
    assert_eq!(game.game().unique::<Score>(), Some(&Score(0)));
    assert_eq!(game.tile(blocker)?, Tile::Blocker);
    Ok(())
}
