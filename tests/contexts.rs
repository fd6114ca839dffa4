//! Declared contexts: `context!`, `Contexts` (every declared context, by
//! type, id and name; several lent at once with `get_many_mut`, which
//! refuses a context named twice; `reset` across all), `Context::of`, fast
//! contexts, and components refused by a context they are not declared for.

mod common;

use common::*;
use reactecs::prelude::*;
use reactecs::{AercMode, ContextBuilder, ContextId, ContextKind};

#[derive(Clone, Copy, Debug, PartialEq)]
struct Volume(u8);

#[derive(Debug, PartialEq)]
struct MasterVolume(u8);

#[derive(Debug, PartialEq)]
struct Shared(u8);

#[derive(Debug, PartialEq)]
struct Key(char);

reactecs::context!(Audio, fast Input);
reactecs::component!(Audio: Volume, unique MasterVolume);
reactecs::component!(Game, Audio: Shared);
reactecs::component!(Input: Key);

fn pos(x: f32) -> Position {
    Position { x, y: 0.0 }
}

fn wrong(context: &'static str, component: &'static str, declared: &'static [&'static str]) -> Error {
    Error::WrongContext {
        context,
        component,
        declared,
    }
}

#[test]
fn context_declares_a_marker_type_with_its_name_and_mode() {
    assert_eq!(Game::NAME, "Game");
    assert_eq!(Game::AERC, AercMode::Safe);
    assert_eq!(Input::NAME, "Input");
    assert_eq!(Input::AERC, AercMode::Fast);
}

#[test]
fn contexts_builds_every_declared_context_ordered_by_name() {
    let contexts = Contexts::new();
    assert_eq!(contexts.names().collect::<Vec<_>>(), ["Audio", "Game", "Input", "Ui"]);
    assert_eq!(contexts.len(), 4);
    assert!(!contexts.is_empty());
    assert_eq!(
        contexts.iter().map(Context::name).collect::<Vec<_>>(),
        contexts.names().collect::<Vec<_>>()
    );
    assert!(contexts.iter().all(Context::is_empty));
    assert_eq!(
        Contexts::default().names().collect::<Vec<_>>(),
        contexts.names().collect::<Vec<_>>()
    );
}

#[test]
fn each_context_is_its_own_instance() {
    let mut contexts = Contexts::new();
    let mut ids: Vec<ContextId> = contexts.iter().map(Context::id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4);

    contexts.context_mut::<Game>().create_entity_with(pos(1.0)).unwrap();
    assert_eq!(contexts.context::<Game>().len(), 1);
    for other in ["Audio", "Input", "Ui"] {
        assert!(contexts.by_name(other).unwrap().is_empty(), "{other}");
    }
    assert_ne!(Contexts::new().context::<Game>().id(), contexts.context::<Game>().id());
}

#[test]
fn get_finds_a_context_by_type() {
    let mut contexts = Contexts::new();
    assert_eq!(contexts.context::<Game>().name(), "Game");
    assert_eq!(contexts.context::<Audio>().name(), "Audio");
    let e = contexts.context_mut::<Audio>().create_entity_with(Volume(3)).unwrap();
    assert_eq!(contexts.context::<Audio>().get::<Volume>(e), Ok(&Volume(3)));
}

#[test]
fn by_id_and_by_name_find_a_context_or_nothing() {
    let mut contexts = Contexts::new();
    let ui = contexts.context::<Ui>().id();
    assert_eq!(contexts.by_id(ui).map(Context::name), Some("Ui"));
    assert_eq!(contexts.by_name("Ui").map(Context::id), Some(ui));
    assert!(contexts.by_name("Nope").is_none());
    assert!(contexts.by_name("ui").is_none(), "names are exact");
    assert!(
        contexts.by_id(Context::new().id()).is_none(),
        "a context outside the set"
    );

    contexts.by_id_mut(ui).unwrap().create_entity();
    contexts.by_name_mut("Ui").unwrap().create_entity();
    assert_eq!(contexts.context::<Ui>().len(), 2);
    assert!(contexts.by_name_mut("Nope").is_none());
    for context in contexts.iter_mut() {
        context.destroy_all_entities();
    }
    assert!(contexts.context::<Ui>().is_empty());
}

#[test]
fn a_fast_context_counts_retains_fast() {
    let mut contexts = Contexts::new();
    assert_eq!(contexts.context::<Input>().aerc().mode(), AercMode::Fast);
    assert_eq!(contexts.context::<Game>().aerc().mode(), AercMode::Safe);
    assert_eq!(Context::of::<Input>().aerc().mode(), AercMode::Fast);
    assert_eq!(Context::of::<Audio>().aerc().mode(), AercMode::Safe);

    let input = contexts.context_mut::<Input>();
    let e = input.create_entity();
    let me = Owner::new();
    input.retain(e, me).unwrap();
    input.retain(e, me).unwrap();
    assert_eq!(input.aerc().owners(e), Ok(None));
    assert_eq!(input.aerc().retain_count(e), Ok(2));
}

#[test]
fn context_of_builds_one_declared_context() {
    let audio = Context::of::<Audio>();
    assert_eq!(audio.name(), "Audio");
    assert!(audio.is_empty());
    let fast_audio = ContextBuilder::of::<Audio>().aerc(AercMode::Fast).build();
    assert_eq!(fast_audio.name(), "Audio");
    assert_eq!(fast_audio.aerc().mode(), AercMode::Fast);
}

#[test]
fn a_declared_context_accepts_its_own_and_undeclared_components() {
    let mut audio = Context::of::<Audio>();
    let e = audio.create_entity_with((Volume(1), Shared(2))).unwrap();
    audio.add(e, pos(0.0)).unwrap();
    audio.add(e, Frozen).unwrap();
    audio.set_unique(MasterVolume(9)).unwrap();
    assert_eq!(audio.unique::<MasterVolume>(), Some(&MasterVolume(9)));

    let mut game = Context::of::<Game>();
    let g = game.create_entity_with((Shared(1), pos(0.0))).unwrap();
    game.set_unique(Score(1)).unwrap();
    assert!(game.has::<Shared>(g));
    check(&audio);
    check(&game);
}

#[test]
fn adding_a_component_of_another_context_is_a_wrong_context_error() {
    let mut game = Context::of::<Game>();
    let e = game.create_entity_with(pos(1.0)).unwrap();
    let with_position = game.add_group(Matcher::all_of::<Position>());
    let spy = Spy::attach(&mut game);

    let error = game.add(e, Volume(1)).unwrap_err();
    assert_eq!(error, wrong("Game", "Volume", &["Audio"]));
    let message = error.to_string();
    assert!(message.contains("`Volume`"), "{message}");
    assert!(message.contains("`Game`"), "{message}");
    assert!(message.contains("Audio"), "names where it is declared: {message}");

    assert_eq!(spy.take(), Vec::<String>::new(), "nothing fired");
    assert!(!game.has::<Volume>(e));
    assert_eq!(game.get::<Position>(e), Ok(&pos(1.0)));
    assert_eq!(
        game.entity(e).unwrap().component_names().collect::<Vec<_>>(),
        ["Position"]
    );
    assert!(game.group(with_position).unwrap().contains(e));
    check(&game);
}

#[test]
fn a_replace_that_adds_a_component_of_another_context_is_a_wrong_context_error() {
    let mut game = Context::of::<Game>();
    let e = game.create_entity_with(pos(1.0)).unwrap();
    let spy = Spy::attach(&mut game);
    assert_eq!(game.replace(e, Volume(1)), Err(wrong("Game", "Volume", &["Audio"])));
    assert_eq!(game.replace(e, Key('w')), Err(wrong("Game", "Key", &["Input"])));
    assert_eq!(spy.take(), Vec::<String>::new());
    assert!(!game.has::<Volume>(e) && !game.has::<Key>(e));
    assert_eq!(game.entity(e).unwrap().component_names().count(), 1);
    check(&game);
}

#[test]
fn a_bundle_with_a_component_of_another_context_creates_nothing() {
    let mut game = Context::of::<Game>();
    let spy = Spy::attach(&mut game);
    assert_eq!(
        game.create_entity_with((pos(1.0), Volume(1))).err(),
        Some(wrong("Game", "Volume", &["Audio"]))
    );
    assert_eq!(
        game.create_entity_with(Volume(1)).err(),
        Some(wrong("Game", "Volume", &["Audio"]))
    );
    assert_eq!(
        game.create_entities_with([(Shared(1), Key('a')), (Shared(2), Key('b'))])
            .err(),
        Some(wrong("Game", "Key", &["Input"]))
    );
    assert_eq!(spy.take(), Vec::<String>::new());
    assert!(game.is_empty());
    assert_eq!(game.entities().count(), 0);
    check(&game);

    // A bundle that fits still works afterwards.
    let e = game.create_entity_with((pos(1.0), Shared(1))).unwrap();
    assert!(game.entity(e).is_ok_and(|v| v.has_all::<(Position, Shared)>()));
}

#[test]
fn set_unique_of_another_contexts_unique_is_a_wrong_context_error() {
    let mut ui = Context::of::<Ui>();
    let spy = Spy::attach(&mut ui);
    assert_eq!(ui.set_unique(Score(1)), Err(wrong("Ui", "Score", &["Game"])));
    let mut game = Context::of::<Game>();
    assert_eq!(
        game.set_unique(MasterVolume(1)),
        Err(wrong("Game", "MasterVolume", &["Audio"]))
    );
    assert_eq!(spy.take(), Vec::<String>::new());
    assert!(ui.is_empty() && game.is_empty());
    assert_eq!(ui.unique::<Score>(), None);
    assert_eq!(game.unique_entity::<MasterVolume>(), None);
}

#[test]
fn a_component_declared_for_two_contexts_is_refused_by_a_third() {
    let mut ui = Context::of::<Ui>();
    let e = ui.create_entity();
    let error = ui.add(e, Shared(1)).unwrap_err();
    assert_eq!(error, wrong("Ui", "Shared", &["Game", "Audio"]));
    let message = error.to_string();
    assert!(message.contains("Game") && message.contains("Audio"), "{message}");
}

#[test]
fn the_contexts_of_contexts_refuse_components_of_other_contexts() {
    let mut contexts = Contexts::new();
    let game = contexts.context_mut::<Game>();
    let e = game.create_entity();
    assert_eq!(game.add(e, Key('w')), Err(wrong("Game", "Key", &["Input"])));
    let input = contexts.context_mut::<Input>();
    assert_eq!(
        input.create_entity_with(Volume(1)).err(),
        Some(wrong("Input", "Volume", &["Audio"]))
    );
    input.create_entity_with(Key('w')).unwrap();
}

#[test]
fn context_new_and_with_name_accept_every_component() {
    for mut context in [Context::new(), Context::with_name("Game"), Context::builder().build()] {
        let e = context.create_entity_with((Volume(1), Key('w'), pos(0.0))).unwrap();
        context.add(e, Shared(1)).unwrap();
        context.replace(e, Volume(2)).unwrap();
        context.set_unique(Score(1)).unwrap();
        context.set_unique(MasterVolume(1)).unwrap();
        assert_eq!(context.get::<Volume>(e), Ok(&Volume(2)));
        check(&context);
    }
}

#[test]
fn contexts_reset_resets_every_context() {
    let mut contexts = Contexts::new();
    contexts.context_mut::<Audio>().create_entity_with(Volume(1)).unwrap();
    contexts.context_mut::<Game>().create_entity_with(pos(1.0)).unwrap();
    contexts.context_mut::<Input>().create_entity();
    contexts.reset().unwrap();
    assert!(contexts.iter().all(Context::is_empty));
    let e = contexts.context_mut::<Game>().create_entity();
    assert_eq!(contexts.context::<Game>().creation_index(e), Ok(0));
}

#[test]
fn contexts_reset_is_refused_while_any_context_retains_and_changes_nothing() {
    let mut contexts = Contexts::new();
    // Audio sorts before Game: it must not be reset before Game refuses.
    let volume = contexts.context_mut::<Audio>().create_entity_with(Volume(1)).unwrap();
    let key = contexts.context_mut::<Input>().create_entity_with(Key('w')).unwrap();
    let game = contexts.context_mut::<Game>();
    let kept = game.create_entity_with(pos(1.0)).unwrap();
    let me = Owner::new();
    game.retain(kept, me).unwrap();
    let spies: Vec<Spy> = contexts.iter_mut().map(Spy::attach).collect();
    let before: Vec<Vec<String>> = contexts.iter_mut().map(whole_state).collect();

    assert_eq!(
        contexts.reset(),
        Err(Error::EntitiesRetained {
            context: "Game",
            count: 1
        })
    );
    assert_eq!(contexts.context::<Audio>().get::<Volume>(volume), Ok(&Volume(1)));
    assert_eq!(contexts.context::<Input>().get::<Key>(key), Ok(&Key('w')));
    assert_eq!(contexts.context::<Game>().get::<Position>(kept), Ok(&pos(1.0)));
    for context in contexts.iter() {
        assert_eq!(context.len(), usize::from(context.name() != "Ui"), "{}", context.name());
    }
    assert_eq!(contexts.iter_mut().map(whole_state).collect::<Vec<_>>(), before);
    for spy in &spies {
        assert_eq!(spy.take(), Vec::<String>::new(), "no event in any context");
    }

    contexts.context_mut::<Game>().release(kept, me).unwrap();
    contexts.reset().unwrap();
    assert!(contexts.iter().all(Context::is_empty));
}

#[test]
fn contexts_reset_is_refused_while_a_destroyed_entity_is_retained() {
    let mut contexts = Contexts::new();
    let volume = contexts.context_mut::<Audio>().create_entity_with(Volume(1)).unwrap();
    let ui = contexts.context_mut::<Ui>();
    let gone = ui.create_entity();
    ui.retain(gone, Owner::new()).unwrap();
    ui.destroy_entity(gone).unwrap();
    assert!(matches!(
        contexts.reset(),
        Err(Error::EntitiesRetained {
            context: "Ui",
            count: 1
        })
    ));
    assert!(contexts.context::<Audio>().is_alive(volume));
}

#[test]
fn collector_ids_know_their_context() {
    let mut contexts = Contexts::new();
    let id = contexts
        .context_mut::<Game>()
        .add_collector(Matcher::all_of::<Position>().added());
    assert_eq!(id.context(), contexts.context::<Game>().id());
    assert_eq!(contexts.by_id(id.context()).map(Context::name), Some("Game"));
    assert!(matches!(
        contexts.context_mut::<Ui>().collector(id),
        Err(Error::UnknownCollector { context: "Ui", .. })
    ));
}

// ---------------------------------------------------------------- several at once

#[test]
fn get_many_mut_lends_two_distinct_contexts_at_once_in_the_order_asked() {
    let mut contexts = Contexts::new();
    contexts.context_mut::<Input>().create_entity_with(Key('w')).unwrap();

    let (game, input) = contexts.get_many_mut::<(Game, Input)>().unwrap();
    assert_eq!((game.name(), input.name()), ("Game", "Input"));
    // A cross-context system reads one and writes the other, copying nothing out.
    let keys: usize = input.query::<&Key>().iter().count();
    for _ in 0..keys {
        game.create_entity_with(pos(1.0)).unwrap();
    }
    input.destroy_all_entities();
    assert_eq!(
        (contexts.context::<Game>().len(), contexts.context::<Input>().len()),
        (1, 0)
    );

    // The order of the tuple, not the contexts' order by name.
    let (input, game) = contexts.get_many_mut::<(Input, Game)>().unwrap();
    assert_eq!((input.name(), game.name()), ("Input", "Game"));
    check(game);
    check(input);
}

#[test]
fn get_many_mut_lends_three_and_four_contexts() {
    let mut contexts = Contexts::new();
    let (audio, game, ui) = contexts.get_many_mut::<(Audio, Game, Ui)>().unwrap();
    audio.create_entity();
    game.create_entity();
    ui.create_entity();
    let (ui, input, game, audio) = contexts.get_many_mut::<(Ui, Input, Game, Audio)>().unwrap();
    assert_eq!(
        [ui.name(), input.name(), game.name(), audio.name()],
        ["Ui", "Input", "Game", "Audio"]
    );
    input.create_entity();
    for name in ["Audio", "Game", "Input", "Ui"] {
        assert_eq!(contexts.by_name(name).unwrap().len(), 1, "{name}");
    }
}

#[test]
fn get_many_mut_refuses_the_same_context_twice() {
    let mut contexts = Contexts::new();
    contexts.context_mut::<Game>().create_entity();
    let twice = contexts.get_many_mut::<(Game, Game)>().map(|_| ()).unwrap_err();
    assert_eq!(
        twice,
        Error::ContextRequestedTwice {
            context: "Game",
            requested: vec!["Game", "Game"],
        }
    );
    assert!(
        twice.to_string().contains("context `Game` is asked for twice"),
        "{twice}"
    );
    assert!(twice.to_string().contains("name each context once"), "{twice}");

    // Anywhere in a longer tuple, at run time (the tuple's types differ).
    let repeated = contexts
        .get_many_mut::<(Audio, Ui, Input, Ui)>()
        .map(|_| ())
        .unwrap_err();
    assert!(
        matches!(repeated, Error::ContextRequestedTwice { context: "Ui", ref requested } if requested == &["Audio", "Ui", "Input", "Ui"]),
        "{repeated:?}"
    );
    assert!(matches!(
        contexts.get_many_mut::<(Input, Audio, Input)>().map(|_| ()),
        Err(Error::ContextRequestedTwice { context: "Input", .. })
    ));
    // Nothing changed, and the contexts are still there to lend.
    assert_eq!(contexts.context::<Game>().len(), 1);
    assert!(contexts.get_many_mut::<(Game, Ui)>().is_ok());
}

#[test]
fn get_many_mut_refuses_two_marker_types_that_name_one_context() {
    // A second marker type with the name of an existing context finds that
    // context (contexts are kept by name): asking for both is asking twice.
    mod elsewhere {
        reactecs::context!(pub Game);
    }
    let mut contexts = Contexts::new();
    assert_eq!(
        contexts.context_mut::<elsewhere::Game>().id(),
        contexts.context::<Game>().id()
    );
    assert!(matches!(
        contexts.get_many_mut::<(Game, elsewhere::Game)>().map(|_| ()),
        Err(Error::ContextRequestedTwice { context: "Game", .. })
    ));
}
