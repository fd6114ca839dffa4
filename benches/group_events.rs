//! group_events: 10,000 entities with Position, and a group
//! `AllOf(Position, Tag)` whose one subscriber counts its Added and Removed
//! events. Each iteration adds the zero-sized `Tag` to every entity, then
//! removes it from every entity: 20,000 archetype moves and 20,000 group
//! events.
//!
//! API measured: `Context::add` and `Context::remove` per entity, from a kept
//! entity list, with a `Context::subscribe_group` handler.
//!
//! Baseline: what one writes by hand to be told when entities gain or lose a
//! tag: a `Vec` of entities (their Position and a `tagged: bool`), a member
//! counter (reactecs' group is archetype-backed and keeps a counter, not a
//! member list), and the same subscriber behind the same kind of boxed
//! `FnMut` in a `Vec`, called with an Added/Removed event on each toggle.
//! Toggling a flag moves no data, so the ratio is the whole price of doing
//! this through the ECS (structural change + group bookkeeping + event),
//! against the cheapest plain code with the same observable behaviour.
//!
//! `reactecs` toggles a tag kept in archetypes (each toggle moves the row);
//! `reactecs_flag` toggles the same tag declared `flag` (nothing moves).

mod common;

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{Position, report_ratios};
use criterion::Criterion;
use reactecs::prelude::*;

const N: usize = 10_000;

/// The zero-sized tag, kept in archetypes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Tag;
/// The same tag declared `flag`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct FlagTag;
reactecs::component!(Tag, flag FlagTag);

/// What the subscriber counts.
#[derive(Default)]
struct Counts {
    added: AtomicUsize,
    removed: AtomicUsize,
}

impl Counts {
    fn get(&self) -> (usize, usize) {
        (self.added.load(Ordering::Relaxed), self.removed.load(Ordering::Relaxed))
    }
}

/// The baseline's event: which entity joined or left.
#[allow(
    dead_code,
    reason = "handed to subscribers, as reactecs' event carries the entity; ours only counts"
)]
enum TagEvent {
    Added { entity: usize },
    Removed { entity: usize },
}

type TagHandler = Box<dyn FnMut(&TagEvent) + Send + Sync>;

/// The hand-written equivalent of the entities, the group and its subscribers.
struct Tagged {
    positions: Vec<Position>,
    tagged: Vec<bool>,
    /// Entities with the tag (the group's length).
    len: usize,
    handlers: Vec<TagHandler>,
}

impl Tagged {
    fn new() -> Self {
        Tagged {
            positions: (0..N).map(|i| Position([i as f32, 0.0, 0.0])).collect(),
            tagged: vec![false; N],
            len: 0,
            handlers: Vec::new(),
        }
    }

    /// Tags (`on`) or untags `entity`; `Err` if it already is (as reactecs'
    /// `add`/`remove` fail on a present/absent component).
    fn set_tag(&mut self, entity: usize, on: bool) -> Result<(), ()> {
        let flag = &mut self.tagged[entity];
        if *flag == on {
            return Err(());
        }
        *flag = on;
        let event = if on {
            self.len += 1;
            TagEvent::Added { entity }
        } else {
            self.len -= 1;
            TagEvent::Removed { entity }
        };
        for handler in &mut self.handlers {
            handler(&event);
        }
        Ok(())
    }
}

fn baseline_round(tagged: &mut Tagged) {
    for e in 0..N {
        tagged.set_tag(black_box(e), true).expect("not tagged yet");
    }
    for e in 0..N {
        tagged.set_tag(black_box(e), false).expect("tagged");
    }
}

fn reactecs_round<T: Component + Default>(game: &mut Context, entities: &[Entity]) {
    for &e in entities {
        game.add(black_box(e), T::default()).expect("no tag yet");
    }
    for &e in entities {
        game.remove::<T>(black_box(e)).expect("has the tag");
    }
}

/// A context of N entities with Position, the group `AllOf(Position, T)`
/// and its counting subscriber; checked once: every entity joins the group
/// (one Added each), then leaves it (one Removed each), keeping its Position.
fn world<T: Component + Default>() -> (Context, Vec<Entity>, GroupId, Arc<Counts>) {
    let mut game = Context::new();
    let entities = game
        .create_entities_with((0..N).map(|i| Position([i as f32, 0.0, 0.0])))
        .expect("no duplicate components");
    let group = game.add_group(Matcher::all_of::<(Position, T)>());
    let counts = Arc::new(Counts::default());
    let sink = Arc::clone(&counts);
    game.subscribe_group(group, move |event: &GroupEvent<'_>| match event {
        GroupEvent::Added { .. } => {
            sink.added.fetch_add(1, Ordering::Relaxed);
        }
        GroupEvent::Removed { .. } => {
            sink.removed.fetch_add(1, Ordering::Relaxed);
        }
        _ => {}
    })
    .expect("the context's group");
    for &e in &entities {
        game.add(e, T::default()).unwrap();
    }
    assert_eq!(game.group(group).unwrap().len(), N);
    assert_eq!(counts.get(), (N, 0));
    for &e in &entities {
        game.remove::<T>(e).unwrap();
    }
    assert_eq!(game.group(group).unwrap().len(), 0);
    assert_eq!(counts.get(), (N, N));
    assert!(
        entities
            .iter()
            .enumerate()
            .all(|(i, &e)| game.get::<Position>(e) == Ok(&Position([i as f32, 0.0, 0.0])) && !game.has::<T>(e))
    );
    game.check_invariants().unwrap();
    (game, entities, group, counts)
}

fn bench(c: &mut Criterion) {
    let (mut game, entities, group, counts) = world::<Tag>();
    let (mut flagged, flagged_entities, flagged_group, flagged_counts) = world::<FlagTag>();

    let mut tagged = Tagged::new();
    let base_counts = Arc::new(Counts::default());
    let sink = Arc::clone(&base_counts);
    tagged.handlers.push(Box::new(move |event: &TagEvent| match event {
        TagEvent::Added { .. } => {
            sink.added.fetch_add(1, Ordering::Relaxed);
        }
        TagEvent::Removed { .. } => {
            sink.removed.fetch_add(1, Ordering::Relaxed);
        }
    }));

    // Check the baseline's work once outside the timed loop, too.
    baseline_round(&mut tagged);
    assert_eq!(base_counts.get(), (N, N));
    assert_eq!(tagged.len, 0);
    assert!(!tagged.tagged.iter().any(|&t| t));
    assert_eq!(tagged.positions[N - 1], Position([(N - 1) as f32, 0.0, 0.0]));

    // In the timed loops: N Added and N Removed events per iteration, and the
    // group empty again at its end.
    let mut bench_group = c.benchmark_group("group_events");
    // A reactecs iteration takes most of a millisecond: 20 samples fit in a
    // few seconds (criterion's default 100 would need at least 5,050 iterations).
    bench_group.sample_size(20);
    bench_group.bench_function("baseline_flags", |b| {
        b.iter(|| {
            let (added, removed) = base_counts.get();
            baseline_round(&mut tagged);
            assert_eq!(base_counts.get(), (added + N, removed + N));
            assert_eq!(tagged.len, 0);
        })
    });
    bench_group.bench_function("reactecs", |b| {
        b.iter(|| {
            let (added, removed) = counts.get();
            reactecs_round::<Tag>(&mut game, &entities);
            assert_eq!(counts.get(), (added + N, removed + N));
            assert_eq!(game.group(group).unwrap().len(), 0);
        })
    });
    bench_group.bench_function("reactecs_flag", |b| {
        b.iter(|| {
            let (added, removed) = flagged_counts.get();
            reactecs_round::<FlagTag>(&mut flagged, &flagged_entities);
            assert_eq!(flagged_counts.get(), (added + N, removed + N));
            assert!(flagged.group(flagged_group).unwrap().is_empty());
        })
    });
    bench_group.finish();
    game.check_invariants().unwrap();
    flagged.check_invariants().unwrap();
    assert!(!game.has::<Tag>(entities[N / 2]));
    assert!(!flagged.has::<FlagTag>(flagged_entities[N / 2]));
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
    report_ratios("group_events", "baseline_flags", &["reactecs", "reactecs_flag"]);
}
