//! The prelude: a reactive program over two contexts (Match-One's Game and
//! Input), written with `use reactecs::prelude::*` and nothing else, naming
//! every item a reactive program needs (queries, collector specs, triggers,
//! the system traits and wrappers, fallible phases, several contexts at
//! once). If this file compiles, the prelude has them.

use reactecs::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Piece(u32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Cell(i32, i32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Click(i32, i32);
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Score(u32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Rendered(usize);

reactecs::context!(Game, Input);
reactecs::component!(Game: Piece, Cell);
reactecs::component!(Game: unique Score, unique Rendered);
reactecs::component!(Input: Click);

/// Fills the board in `initialize`, failing with the context's error.
struct FillBoard;
impl System for FillBoard {
    fn try_initialize(&mut self, game: &mut Context) -> SystemResult {
        game.set_unique(Score(0))?;
        for x in 0..3 {
            game.create_entity_with((Piece(x as u32), Cell(x, 0)))?;
        }
        Ok(())
    }
}

/// Turns each click into a score point: reads Input, writes Game.
struct ProcessClicks;
impl System<Contexts> for ProcessClicks {
    fn try_execute(&mut self, contexts: &mut Contexts) -> SystemResult {
        let (game, input) = contexts.get_many_mut::<(Game, Input)>()?;
        let clicks = count(input.query::<&Click>());
        game.get_mut::<Score>(game.unique_entity::<Score>().ok_or("no score: FillBoard sets it")?)?
            .0 += clicks as u32;
        input.destroy_all_entities();
        Ok(())
    }
}

fn count(query: Query<'_, &Click>) -> usize {
    query.iter().count()
}

fn shift(mut query: QueryMut<'_, &mut Cell>) {
    for cell in query.iter() {
        cell.1 += 1;
    }
}

/// Moves every cell down (silently).
struct Fall;
impl System for Fall {
    fn try_execute(&mut self, game: &mut Context) -> SystemResult {
        shift(game.query_mut::<&mut Cell>()?);
        Ok(())
    }
}

/// Renders the pieces that were added (the starting board included), and
/// counts them in `Rendered`.
#[derive(Default)]
struct Render {
    rendered: usize,
}
impl ReactiveSystem for Render {
    fn trigger(&mut self, game: &mut Context) -> CollectorId {
        let added: TriggerOnEvent = Matcher::all_of::<Piece>().added();
        let spec: CollectorSpec = added.into();
        game.add_collector(spec)
    }
    fn try_execute(&mut self, game: &mut Context, pieces: &[Entity]) -> SystemResult {
        for &piece in pieces {
            game.get::<Piece>(piece)?;
            self.rendered += 1;
        }
        game.set_unique(Rendered(self.rendered))?;
        Ok(())
    }
}

/// Counts new pieces and clicks, in both contexts.
#[derive(Default)]
struct Audit {
    seen: Vec<ContextEntity>,
}
impl ReactiveSystem<Contexts> for Audit {
    fn trigger(&mut self, contexts: &mut Contexts) -> Vec<CollectorId> {
        vec![
            contexts
                .context_mut::<Game>()
                .add_collector(Matcher::all_of::<Piece>().added()),
            contexts
                .context_mut::<Input>()
                .add_collector(Matcher::all_of::<Click>().added()),
        ]
    }
    fn execute(&mut self, _contexts: &mut Contexts, entities: &[ContextEntity]) {
        self.seen.extend_from_slice(entities);
    }
}

fn context_name<K: ContextKind>(_context: K) -> &'static str {
    K::NAME
}

fn run() -> Result<(), SystemFailed> {
    let mut contexts = Contexts::new();
    let mut frame = Feature::new("Match-One")
        .with_in(Game, FillBoard)
        .with(ProcessClicks)
        .with_in(Game, Fall)
        .with_in(Game, Reactive::new(Render::default()))
        .with(InContext::new(Game, Systems::new()))
        .with(MultiReactive::new(Audit::default()));
    frame.try_initialize(&mut contexts)?;
    contexts
        .context_mut::<Input>()
        .create_entity_with(Click(1, 1))
        .expect("a click");
    frame.try_execute(&mut contexts)?;
    frame.try_cleanup(&mut contexts)?;

    assert_eq!(contexts.context::<Game>().unique::<Score>(), Some(&Score(1)));
    // The starting board, made in FillBoard's `initialize`, was rendered.
    assert_eq!(contexts.context::<Game>().unique::<Rendered>(), Some(&Rendered(3)));
    assert_eq!(context_name(Input), "Input");
    let render = frame.timings().get("Render").expect("timed");
    assert_eq!(render.execute().runs(), 1);
    frame.try_teardown(&mut contexts)
}

#[test]
fn the_prelude_alone_runs_a_reactive_program_over_two_contexts() {
    if let Err(failure) = run() {
        panic!("{failure}");
    }
}

/// Ends a subscription kept from set-up.
fn stop_listening(game: &mut Context, id: SubscriptionId) -> Result<(), Error> {
    game.unsubscribe(id)
}

/// The commands a playback refused, if that is what `error` is.
fn refused(error: &Error) -> &[CommandFailure] {
    match error {
        Error::CommandsFailed { failures, .. } => failures,
        _ => &[],
    }
}

#[test]
fn the_prelude_names_subscriptions_playback_failures_entity_lists_and_diffs() {
    let mut game = Context::new();
    let listening = game.subscribe(|_: &ContextEvent<'_>| {});
    stop_listening(&mut game, listening).expect("this context's subscription");

    let ghost = game.create_entity();
    game.destroy_entity(ghost).expect("alive");
    let mut commands = CommandBuffer::new();
    commands.add(ghost, Cell(0, 0));
    let error = commands.playback(&mut game).expect_err("the entity is gone");
    assert_eq!(refused(&error).len(), 1);

    let cells = game.add_group(Matcher::all_of::<Cell>());
    game.create_entity_with(Cell(1, 1)).expect("a cell");
    let list: EntityList = game.group(cells).expect("this context's group").entities();
    assert_eq!(list.len(), 1);
    let same: ContextDiff = game.diff::<Cell>(&game);
    assert!(same.is_empty());
}

/// Snapshot code names the handle mapping, the limits and the typed tuple.
#[cfg(feature = "serde")]
mod snapshots {
    use reactecs::prelude::*;

    #[derive(serde::Serialize, serde::Deserialize)]
    struct Follows(Entity);
    impl MapEntities for Follows {
        fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
            self.0 = map(self.0);
        }
    }
    reactecs::component!(Follows);
    reactecs::snapshot!(Follows);

    fn copy_of<C: SnapshotTuple>(from: &Context, limits: RestoreLimits) -> Result<Context, Error> {
        let json = serde_json::to_string(&from.snapshot_of::<C>()?).expect("JSON");
        let mut copy = Context::new();
        copy.restore_of::<C>(&mut serde_json::Deserializer::from_str(&json), limits)?;
        Ok(copy)
    }

    #[test]
    fn the_prelude_names_what_snapshot_code_needs() {
        let mut game = Context::new();
        let leader = game.create_entity();
        game.add(leader, Follows(leader)).expect("alive");
        let copy = copy_of::<Follows>(&game, RestoreLimits::default().max_entities(10)).expect("within limits");
        let restored = copy.entities().next().expect("one entity");
        assert_eq!(copy.get::<Follows>(restored).expect("restored").0, restored);
    }
}
