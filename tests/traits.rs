//! The common traits (C-COMMON-TRAITS, C-DEBUG, C-SEND-SYNC): every public
//! type is `Debug`; every one that should be is `Send` and `Sync` (checked at
//! compile time: this file does not build otherwise); `Feature` and
//! `Systems` are `Send`, so a frame moves to another thread with its
//! context; and the newer impls (`CollectorSpec` equality, event equality,
//! id order, the views' `Debug`) say what they should.

use std::collections::{BTreeSet, HashSet};
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use reactecs::event::SubscriptionId;
use reactecs::index::IndexId;
use reactecs::prelude::*;
use reactecs::query::{SparseChunk, SparseChunkMut, SparseRows, SparseRowsMut};
use reactecs::system::{ContextEntity, Phase, PhaseStats, SystemTimings, SystemsIter, Timings, TimingsIter};
use reactecs::{
    AercMode, CommandFailure, ComponentId, ComponentInfo, ComponentSet, ContextBuilder, ContextId, EntityList,
    GroupIter, RemovedView, StorageKind, StorageStats,
};

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Position(f32, f32);
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Health(u32);
#[derive(Debug)]
struct Tag(u8);
struct Piece;
reactecs::component!(Position, Health, sparse Tag);
#[cfg(feature = "serde")]
reactecs::snapshot!(Position, Health);

reactecs::context!(Board);
reactecs::component!(Board: Piece);

fn send_sync<T: Send + Sync>() {}
fn send<T: Send>() {}
fn debug<T: Debug>() {}

/// Moves every `Position` right by one.
struct Move;
impl System for Move {
    fn execute(&mut self, game: &mut Context) {
        for position in game.query_mut::<&mut Position>().expect("no aliasing").iter() {
            position.0 += 1.0;
        }
    }
}

/// Reacts to `Health` added.
struct Heal;
impl ReactiveSystem for Heal {
    fn trigger(&mut self, game: &mut Context) -> CollectorId {
        game.add_collector(Matcher::all_of::<Health>().added())
    }
}

/// Spawns one entity per frame, deferred.
struct Spawn;
impl DeferredSystem for Spawn {
    fn execute(&mut self, _game: &Context, commands: &mut CommandBuffer) {
        commands.create_entity();
    }
}

/// Reacts to pieces added to the board.
struct Watch;
impl ReactiveSystem<Contexts> for Watch {
    fn trigger(&mut self, contexts: &mut Contexts) -> Vec<CollectorId> {
        vec![
            contexts
                .context_mut::<Board>()
                .add_collector(Matcher::all_of::<Piece>().added()),
        ]
    }
}

#[test]
fn every_public_type_that_should_be_is_send_and_sync() {
    // Contexts, entities and their views.
    send_sync::<Context>();
    send_sync::<Contexts>();
    send_sync::<ContextBuilder>();
    send_sync::<ContextId>();
    send_sync::<Entity>();
    send_sync::<EntityRef<'static>>();
    send_sync::<EntityMut<'static>>();
    send_sync::<AercMode>();
    send_sync::<Owner>();
    // Components.
    send_sync::<ComponentId>();
    send_sync::<ComponentInfo>();
    send_sync::<ComponentRef<'static>>();
    send_sync::<ComponentSet>();
    send_sync::<StorageKind>();
    send_sync::<StorageStats>();
    // Matchers, groups, collectors, indices, events.
    send_sync::<Matcher>();
    send_sync::<Group<'static>>();
    send_sync::<GroupId>();
    send_sync::<GroupIter<'static>>();
    send_sync::<GroupEvent<'static>>();
    send_sync::<EntityList>();
    send_sync::<Trigger>();
    send_sync::<TriggerOnEvent>();
    send_sync::<CollectorSpec>();
    send_sync::<CollectorId>();
    send_sync::<Collector<'static>>();
    send_sync::<RemovedView<'static, Health>>();
    send_sync::<EntityIndex<u32>>();
    send_sync::<PrimaryEntityIndex<u32>>();
    send_sync::<IndexId<EntityIndex<u32>>>();
    send_sync::<ContextEvent<'static>>();
    send_sync::<SubscriptionId>();
    // Queries and their chunks.
    send_sync::<Query<'static, &'static Position>>();
    send_sync::<QueryMut<'static, &'static mut Position>>();
    send_sync::<SparseChunk<'static, Tag>>();
    send_sync::<SparseRows<'static, Tag>>();
    send_sync::<SparseChunkMut<'static, Tag>>();
    send_sync::<SparseRowsMut<'static, Tag>>();
    // Commands and errors.
    send_sync::<CommandBuffer>();
    send_sync::<CommandFailure>();
    send_sync::<Error>();
    send_sync::<SystemFailed>();
    // Systems: the wrappers are as `Send` and `Sync` as the system they wrap.
    send_sync::<Reactive<Heal>>();
    send_sync::<MultiReactive<Watch>>();
    send_sync::<Deferred<Spawn>>();
    send_sync::<InContext<Board, Move>>();
    send_sync::<ContextEntity>();
    send_sync::<Phase>();
    send_sync::<PhaseStats>();
    // Containers box `Send` systems: `Send`, not `Sync`. Their borrowed views
    // (`SystemsIter`, `Timings`, `SystemTimings`, `TimingsIter`) point into
    // them, so they are neither.
    send::<Feature>();
    send::<Feature<Contexts>>();
    send::<Systems>();
    send::<Systems<Contexts>>();
    #[cfg(feature = "serde")]
    {
        send_sync::<reactecs::Snapshot<'static>>();
        send_sync::<reactecs::TypedSnapshot<'static, (Position, Health)>>();
        send_sync::<reactecs::RestoreLimits>();
    }
}

#[test]
fn every_public_type_is_debug() {
    debug::<Context>();
    debug::<Contexts>();
    debug::<ContextBuilder>();
    debug::<ContextId>();
    debug::<Entity>();
    debug::<EntityRef<'static>>();
    debug::<EntityMut<'static>>();
    debug::<AercMode>();
    debug::<Owner>();
    debug::<ComponentId>();
    debug::<ComponentInfo>();
    debug::<ComponentRef<'static>>();
    debug::<ComponentSet>();
    debug::<StorageKind>();
    debug::<StorageStats>();
    debug::<Matcher>();
    debug::<Group<'static>>();
    debug::<GroupId>();
    debug::<GroupIter<'static>>();
    debug::<GroupEvent<'static>>();
    debug::<EntityList>();
    debug::<Trigger>();
    debug::<TriggerOnEvent>();
    debug::<CollectorSpec>();
    debug::<CollectorId>();
    debug::<Collector<'static>>();
    debug::<RemovedView<'static, Health>>();
    debug::<EntityIndex<u32>>();
    debug::<PrimaryEntityIndex<u32>>();
    debug::<IndexId<EntityIndex<u32>>>();
    debug::<ContextEvent<'static>>();
    debug::<SubscriptionId>();
    debug::<Query<'static, &'static Position>>();
    debug::<QueryMut<'static, &'static mut Position>>();
    debug::<SparseChunk<'static, Tag>>();
    debug::<SparseRows<'static, Tag>>();
    debug::<SparseChunkMut<'static, Tag>>();
    debug::<SparseRowsMut<'static, Tag>>();
    debug::<CommandBuffer>();
    debug::<CommandFailure>();
    debug::<Error>();
    debug::<SystemFailed>();
    debug::<Reactive<Heal>>();
    debug::<MultiReactive<Watch>>();
    debug::<Deferred<Spawn>>();
    debug::<InContext<Board, Move>>();
    debug::<ContextEntity>();
    debug::<Phase>();
    debug::<PhaseStats>();
    debug::<Feature>();
    debug::<Systems>();
    debug::<SystemsIter<'static, Context>>();
    debug::<Timings<'static>>();
    debug::<SystemTimings<'static>>();
    debug::<TimingsIter<'static>>();
    #[cfg(feature = "serde")]
    {
        debug::<reactecs::Snapshot<'static>>();
        debug::<reactecs::TypedSnapshot<'static, (Position, Health)>>();
        debug::<reactecs::RestoreLimits>();
    }
}

#[test]
fn a_frame_moves_to_another_thread_with_its_context() {
    let mut game = Context::new();
    let e = game.create_entity_with(Position(0.0, 0.0)).unwrap();
    let mut frame = Feature::new("Frame")
        .with(Move)
        .with(Reactive::new(Heal))
        .with_deferred(Spawn)
        .with(Systems::new().with(Move));
    frame.initialize(&mut game);
    let (game, frame) = std::thread::spawn(move || {
        frame.execute(&mut game);
        (game, frame)
    })
    .join()
    .unwrap();
    assert_eq!(game.get::<Position>(e).unwrap(), &Position(2.0, 0.0));
    assert_eq!(game.len(), 2, "the deferred spawn ran on the worker");
    assert_eq!(frame.timings().get("Move").unwrap().execute().runs(), 1);
}

#[test]
fn collector_specs_are_equal_when_their_triggers_and_kept_component_are() {
    let added = || CollectorSpec::from(Matcher::all_of::<Position>().added());
    assert_eq!(added(), added());
    assert_eq!(added().clone(), added());
    assert_ne!(added(), Matcher::all_of::<Position>().removed().into());
    assert_ne!(added(), added().and(Matcher::all_of::<Health>().added()));
    assert_ne!(added(), added().keep_removed::<Health>());
    assert_eq!(added().keep_removed::<Health>(), added().keep_removed::<Health>());
    assert_ne!(added().keep_removed::<Health>(), added().keep_removed::<Position>());

    let set: HashSet<CollectorSpec> = [
        added(),
        added(),
        added().keep_removed::<Health>(),
        added().keep_removed::<Health>(),
    ]
    .into_iter()
    .collect();
    assert_eq!(set.len(), 2);

    let printed = format!("{:?}", added().keep_removed::<Health>());
    assert!(printed.starts_with("CollectorSpec"), "{printed}");
    assert!(printed.contains("Position") && printed.contains("Health"), "{printed}");
}

#[test]
fn context_events_compare_by_variant_entity_and_viewed_value() {
    let mut game = Context::new();
    let e = game.create_entity_with(Health(3)).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    game.subscribe(move |event: &ContextEvent<'_>| {
        let copy = *event;
        let facts = match *event {
            ContextEvent::ComponentReplaced { entity, old, new } => vec![
                copy == *event,
                old.get::<Health>() == Some(&Health(3)) && new.get::<Health>() == Some(&Health(2)),
                old != new,
                *event
                    != ContextEvent::ComponentReplaced {
                        entity,
                        old: new,
                        new: old,
                    },
            ],
            ContextEvent::EntityDestroyed { entity } => vec![
                copy == *event,
                *event == ContextEvent::EntityDestroyed { entity: e },
                *event != ContextEvent::EntityCreated { entity },
                *event != ContextEvent::EntityReleased { entity },
            ],
            _ => vec![copy == *event],
        };
        sink.lock().unwrap().push(facts);
    });
    game.replace(e, Health(2)).unwrap();
    game.destroy_entity(e).unwrap();
    let seen = seen.lock().unwrap();
    assert!(
        seen.len() >= 3,
        "replaced, removed, will be destroyed, destroyed: {seen:?}"
    );
    assert!(seen.iter().flatten().all(|&fact| fact), "{seen:?}");
    assert_eq!(seen[0].len(), 4, "the replace came first");
}

#[test]
fn group_events_compare_by_variant_group_and_entity() {
    let mut game = Context::new();
    let healthy = game.add_group(Matcher::all_of::<Health>());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    game.subscribe_group(healthy, move |event: &GroupEvent<'_>| {
        let same = *event == *event;
        let other = match *event {
            GroupEvent::Added { group, entity } => GroupEvent::Removed {
                group,
                entity,
                removed: None,
            },
            _ => return sink.lock().unwrap().push(same),
        };
        sink.lock().unwrap().push(same && *event != other);
    })
    .unwrap();
    let e = game.create_entity_with(Health(1)).unwrap();
    game.replace(e, Health(2)).unwrap();
    game.remove::<Health>(e).unwrap();
    assert_eq!(*seen.lock().unwrap(), [true, true, true]);
}

#[test]
fn collector_and_index_ids_are_ordered() {
    let mut game = Context::new();
    let a = game.add_collector(Matcher::all_of::<Position>().added());
    let b = game.add_collector(Matcher::all_of::<Health>().added());
    assert!(a < b);
    assert_eq!(BTreeSet::from([b, a]).into_iter().collect::<Vec<_>>(), [a, b]);

    let first = game.add_index(EntityIndex::new("by health", |h: &Health| h.0)).unwrap();
    let second = game
        .add_index(EntityIndex::new("by tenths", |h: &Health| h.0 / 10))
        .unwrap();
    assert!(first < second);
    assert_eq!(first.cmp(&first), std::cmp::Ordering::Equal);

    let (x, y) = (game.create_entity(), game.create_entity());
    let pair = |e| ContextEntity {
        context: game.id(),
        entity: e,
    };
    assert!(pair(x) < pair(y));
}

#[test]
fn views_print_what_they_view() {
    let mut game = Context::with_name("Game");
    let e = game.create_entity_with((Position(1.0, 2.0), Health(3))).unwrap();
    game.add(e, Tag(7)).unwrap();
    let healthy = game.add_group(Matcher::all_of::<Health>());
    let gone = game.add_collector(Matcher::all_of::<Health>().removed().keep_removed::<Health>());
    game.remove::<Health>(e).unwrap();

    let query = game.query::<&Position>().matching(Matcher::all_of::<Tag>());
    let printed = format!("{query:?}");
    assert!(printed.starts_with("Query {"), "{printed}");
    assert!(
        printed.contains("Position") && printed.contains("\"Game\""),
        "{printed}"
    );
    assert!(printed.contains("Tag") && printed.contains("count: 1"), "{printed}");

    let query = game.query_mut::<&mut Position>().unwrap();
    let printed = format!("{query:?}");
    assert!(
        printed.starts_with("QueryMut {") && printed.contains("count: 1"),
        "{printed}"
    );

    game.query::<&Tag>().for_each_chunk(|chunk| {
        let printed = format!("{chunk:?}");
        assert!(
            printed.contains("Tag(7)") && printed.contains(&format!("{e:?}")),
            "{printed}"
        );
        assert_eq!(chunk.get(0).map(|tag| tag.0), Some(7));
        assert_eq!(format!("{:?}", chunk.iter()), "SparseRows { remaining: 1 }");
    });
    game.query_mut::<&mut Tag>().unwrap().for_each_chunk(|mut chunk| {
        assert!(format!("{chunk:?}").starts_with("SparseChunkMut"));
        assert_eq!(format!("{:?}", chunk.iter_mut()), "SparseRowsMut { remaining: 1 }");
    });

    game.add(e, Health(4)).unwrap();
    let mut iter = game.group(healthy).unwrap().iter();
    assert_eq!(format!("{iter:?}"), "GroupIter { remaining: 1 }");
    assert_eq!(iter.clone().next(), Some(e), "a clone goes on from the same place");
    iter.next();
    assert_eq!(format!("{iter:?}"), "GroupIter { remaining: 0 }");

    let collector = game.collector(gone).unwrap();
    assert_eq!(collector.removed::<Health>().get(e), Some(&Health(3)));
    assert_eq!(
        format!("{:?}", collector.removed::<Health>()),
        "RemovedView<Health> { values: 1 }"
    );
    assert_eq!(
        format!("{:?}", collector.removed::<Position>()),
        "RemovedView<Position> { values: 0 }"
    );

    #[cfg(feature = "serde")]
    {
        let printed = format!("{:?}", game.snapshot());
        assert_eq!(printed, "Snapshot { context: \"Game\", entities: 1 }");
        let printed = format!("{:?}", game.snapshot_of::<(Position, Health)>().unwrap());
        assert!(printed.starts_with("TypedSnapshot {"), "{printed}");
        assert!(
            printed.contains("Position") && printed.contains("entities: 1"),
            "{printed}"
        );
    }
}

#[test]
fn system_wrappers_print_the_system_they_run() {
    let mut game = Context::new();
    let heal = Reactive::in_context(&mut game, Heal);
    let printed = format!("{heal:?}");
    assert!(
        printed.starts_with("Reactive {") && printed.contains("\"Heal\""),
        "{printed}"
    );
    assert!(printed.contains("collector: Some("), "{printed}");

    let deferred = Deferred::new(Spawn);
    assert_eq!(
        format!("{deferred:?}"),
        "Deferred { system: \"Spawn\", commands: 0, last_error: None }"
    );

    let in_board = InContext::new(Board, Move);
    assert_eq!(
        format!("{in_board:?}"),
        "InContext { context: \"Board\", system: \"Move\" }"
    );

    let watch = MultiReactive::new(Watch);
    assert_eq!(
        format!("{watch:?}"),
        "MultiReactive { system: \"Watch\", collectors: None }"
    );

    let frame = Feature::new("Frame").with(heal).with_deferred(Spawn);
    let printed = format!("{frame:?}");
    assert!(
        printed.contains("Frame") && printed.contains("Heal") && printed.contains("Spawn"),
        "{printed}"
    );
    assert_eq!(frame.iter().clone().count(), 2);
}
