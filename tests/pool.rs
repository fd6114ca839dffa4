//! Component pools: values of `pooled` components that the context lets go
//! of (removed, replaced, destroyed) are recycled and handed out again by
//! `pool::<T>().take()`; pools are bounded, per context, and every value is
//! dropped exactly once.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use reactecs::prelude::*;
use reactecs::{Component, Error};

/// A heap-owning component: the waypoints of a walker.
#[derive(Debug, Default, PartialEq)]
struct Path(Vec<u32>);
/// By hand, for `clone_from` (which `derive(Clone)` does not forward): it
/// reuses the target's buffer when a collector keeps a removed value.
impl Clone for Path {
    fn clone(&self) -> Self {
        Path(self.0.clone())
    }

    fn clone_from(&mut self, source: &Self) {
        self.0.clone_from(&source.0);
    }
}
impl Recycle for Path {
    fn recycle(&mut self) {
        self.0.clear();
    }
}

/// A pooled value that counts its live instances and its recycles.
#[derive(Debug)]
struct Buffer {
    data: Vec<u8>,
    live: Arc<AtomicUsize>,
    recycled: Arc<AtomicUsize>,
}

impl Buffer {
    fn new(tally: &Tally) -> Self {
        tally.live.fetch_add(1, Ordering::SeqCst);
        Buffer {
            data: Vec::new(),
            live: tally.live.clone(),
            recycled: tally.recycled.clone(),
        }
    }
}

impl Default for Buffer {
    /// A value made by the pool for an empty pool: counted by the thread's
    /// tally, which `pool().take()` tests set.
    fn default() -> Self {
        TALLY.with(|tally| Buffer::new(&tally.borrow()))
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        self.live.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Recycle for Buffer {
    const POOL_CAPACITY: usize = 4;

    fn recycle(&mut self) {
        self.recycled.fetch_add(1, Ordering::SeqCst);
        self.data.clear();
    }
}

#[derive(Clone, Default)]
struct Tally {
    live: Arc<AtomicUsize>,
    recycled: Arc<AtomicUsize>,
}

impl Tally {
    fn live(&self) -> usize {
        self.live.load(Ordering::SeqCst)
    }

    fn recycled(&self) -> usize {
        self.recycled.load(Ordering::SeqCst)
    }
}

thread_local! {
    static TALLY: std::cell::RefCell<Tally> = std::cell::RefCell::default();
}

/// This thread's tally, fresh.
fn tally() -> Tally {
    let tally = Tally::default();
    TALLY.with(|t| *t.borrow_mut() = tally.clone());
    tally
}

/// A pooled component kept in a sparse set.
#[derive(Debug, Default, PartialEq)]
struct Note(String);
impl Clone for Note {
    fn clone(&self) -> Self {
        Note(self.0.clone())
    }

    fn clone_from(&mut self, source: &Self) {
        self.0.clone_from(&source.0);
    }
}
impl Recycle for Note {
    fn recycle(&mut self) {
        self.0.clear();
    }
}

/// A pooled singleton.
#[derive(Clone, Debug, Default, PartialEq)]
struct Journal(Vec<String>);
impl Recycle for Journal {
    fn recycle(&mut self) {
        self.0.clear();
    }
}

reactecs::component!(pooled Path, pooled Buffer, pooled sparse Note, unique pooled Journal);

fn path(points: &[u32]) -> Path {
    Path(points.to_vec())
}

#[test]
fn the_declaration_marks_pooled_components() {
    assert!(Path::component_info().is_pooled());
    assert!(Note::component_info().is_pooled());
    assert!(Journal::component_info().is_pooled() && Journal::component_info().is_unique());
    assert!(!Position::component_info().is_pooled());
}

#[test]
fn a_removed_value_is_recycled_and_handed_out_again() {
    let mut game = Context::new();
    let e = game.create_entity_with(path(&[1, 2, 3])).unwrap();
    let buffer = game.get::<Path>(e).unwrap().0.as_ptr();
    game.remove::<Path>(e).unwrap();
    assert_eq!(game.pool::<Path>().len(), 1);
    let reused = game.pool::<Path>().take();
    assert_eq!(reused, Path(Vec::new()), "recycled: emptied by `Recycle`");
    assert_eq!(reused.0.as_ptr(), buffer, "the same allocation, handed out again");
    assert!(reused.0.capacity() >= 3);
    assert_eq!(game.pool::<Path>().len(), 0);
    // An empty pool makes a new value.
    assert_eq!(game.pool::<Path>().take(), Path::default());
    check(&game);
}

#[test]
fn replaced_destroyed_and_unique_values_go_back_to_the_pool() {
    let mut game = Context::new();
    let e = game
        .create_entity_with((Position { x: 0.0, y: 0.0 }, path(&[1])))
        .unwrap();
    game.replace(e, path(&[2])).unwrap();
    assert_eq!(game.pool::<Path>().len(), 1, "the replaced value");
    assert_eq!(game.get::<Path>(e).unwrap(), &path(&[2]));
    game.add(e, Note("sparse".into())).unwrap();
    game.destroy_entity(e).unwrap();
    assert_eq!(game.pool::<Path>().len(), 2, "the destroyed entity's value");
    assert_eq!(game.pool::<Note>().len(), 1, "a sparse value of the destroyed entity");
    assert_eq!(game.pool::<Note>().take(), Note::default());

    game.set_unique(Journal(vec!["day 1".into()])).unwrap();
    game.set_unique(Journal(vec!["day 2".into()])).unwrap();
    assert_eq!(game.pool::<Journal>().len(), 1, "set_unique replaced the held value");
    let journal = game.take_unique::<Journal>().unwrap();
    game.pool().recycle(journal);
    assert_eq!(game.pool::<Journal>().len(), 2);
    assert_eq!(game.storage_stats().pooled_values, 4);
    check(&game);
}

#[test]
fn a_taken_value_is_the_callers_until_it_is_recycled() {
    let mut game = Context::new();
    let e = game.create_entity_with(path(&[4, 5])).unwrap();
    let taken = game.take::<Path>(e).unwrap();
    assert_eq!(taken, path(&[4, 5]));
    assert_eq!(game.pool::<Path>().len(), 0, "take gives the value away");
    game.pool().recycle(taken);
    assert_eq!(game.pool::<Path>().len(), 1);
    assert_eq!(game.pool::<Path>().take(), Path::default());
}

#[test]
fn a_refused_value_is_dropped_not_pooled() {
    let tally = tally();
    let mut game = Context::new();
    let mut kept = Buffer::new(&tally);
    kept.data.push(1);
    let e = game.create_entity_with(kept).unwrap();
    let mut second = Buffer::new(&tally);
    second.data.push(2);
    assert_eq!(tally.live(), 2);

    let refused = game.add(e, second);
    assert!(
        matches!(refused, Err(Error::ComponentAlreadyPresent { .. })),
        "{refused:?}"
    );
    assert_eq!(tally.live(), 1, "the refused value was dropped");
    assert_eq!(tally.recycled(), 0, "and not recycled");
    assert_eq!(game.pool::<Buffer>().len(), 0, "nor pooled");
    assert_eq!(game.get::<Buffer>(e).unwrap().data, [1], "the entity keeps its own");
    // Handing out from the empty pool makes a new value.
    assert!(game.pool::<Buffer>().take().data.is_empty());
    assert_eq!(tally.recycled(), 0);
    check(&game);
}

#[test]
fn recycle_runs_once_per_value_entering_the_pool() {
    let tally = tally();
    let mut game = Context::new();
    let e = game.create_entity_with(Buffer::new(&tally)).unwrap();
    game.get_mut::<Buffer>(e).unwrap().data.extend_from_slice(b"frame");
    game.remove::<Buffer>(e).unwrap();
    assert_eq!(tally.recycled(), 1);
    let reused = game.pool::<Buffer>().take();
    assert!(reused.data.is_empty() && reused.data.capacity() >= 5);
    assert_eq!(tally.recycled(), 1, "handing out does not recycle again");
    assert_eq!(tally.live(), 1);
}

#[test]
fn pools_are_bounded() {
    let tally = tally();
    let mut game = Context::new();
    assert_eq!(game.pool::<Buffer>().capacity(), 4, "the type's `POOL_CAPACITY`");
    assert_eq!(game.pool::<Path>().capacity(), 128, "the default");
    let entities: Vec<Entity> = (0..6)
        .map(|_| game.create_entity_with(Buffer::new(&tally)).unwrap())
        .collect();
    for &e in &entities {
        game.remove::<Buffer>(e).unwrap();
    }
    assert_eq!(game.pool::<Buffer>().len(), 4);
    assert_eq!(tally.live(), 4, "the two that did not fit were dropped");
    assert_eq!(tally.recycled(), 4, "only values kept are recycled");

    game.pool::<Buffer>().set_capacity(1);
    assert_eq!((game.pool::<Buffer>().len(), game.pool::<Buffer>().capacity()), (1, 1));
    assert_eq!(tally.live(), 1, "lowering the bound drops what is above it");
    game.pool::<Buffer>().set_capacity(0);
    let e = game.create_entity_with(Buffer::new(&tally)).unwrap();
    game.destroy_entity(e).unwrap();
    assert_eq!(
        (game.pool::<Buffer>().len(), tally.live()),
        (0, 0),
        "a bound of 0 pools nothing"
    );
    check(&game);
}

#[test]
fn every_value_is_dropped_exactly_once() {
    let tally = tally();
    {
        let mut game = Context::new();
        let mut entities = Vec::new();
        for i in 0..20 {
            let e = game
                .create_entity_with((Position { x: i as f32, y: 0.0 }, Buffer::new(&tally)))
                .unwrap();
            entities.push(e);
        }
        for (i, &e) in entities.iter().enumerate() {
            match i % 4 {
                0 => game.remove::<Buffer>(e).unwrap(),
                1 => {
                    let fresh = game.pool::<Buffer>().take();
                    game.replace(e, fresh).unwrap();
                }
                2 => game.destroy_entity(e).unwrap(),
                _ => drop(game.take::<Buffer>(e).unwrap()),
            }
        }
        assert_eq!(game.pool::<Buffer>().len(), 4);
        // Live: 5 still held by entities (the replaced ones), 4 pooled.
        assert_eq!(tally.live(), 9);
        game.destroy_all_entities();
        assert_eq!(tally.live(), 4, "the pool was full: the rest were dropped");
        game.reset().unwrap();
        assert_eq!(
            (game.pool::<Buffer>().len(), tally.live()),
            (0, 0),
            "reset empties the pools"
        );
        for _ in 0..3 {
            game.create_entity_with(Buffer::new(&tally)).unwrap();
        }
        let e = game.create_entity_with(Buffer::new(&tally)).unwrap();
        game.remove::<Buffer>(e).unwrap();
        assert_eq!(tally.live(), 4);
        check(&game);
    }
    assert_eq!(
        tally.live(),
        0,
        "dropping the context drops pooled and held values once"
    );
}

#[test]
fn a_pooled_value_never_passes_to_another_context() {
    let mut game = Context::with_name("Game");
    let mut ui = Context::with_name("Ui");
    let e = game.create_entity_with(path(&[1, 2, 3, 4])).unwrap();
    game.remove::<Path>(e).unwrap();
    assert_eq!((game.pool::<Path>().len(), ui.pool::<Path>().len()), (1, 0));
    let fresh = ui.pool::<Path>().take();
    assert_eq!(fresh.0.capacity(), 0, "a new value, not the other context's");
    assert_eq!(game.pool::<Path>().len(), 1);
}

#[test]
fn observers_see_the_value_before_it_is_recycled() {
    let mut game = Context::new();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    game.subscribe(move |event: &ContextEvent<'_>| {
        let mut log = log.lock().unwrap();
        match event {
            ContextEvent::ComponentReplaced { old, new, .. } => {
                log.push(format!("replaced {:?} -> {:?}", old.get::<Path>(), new.get::<Path>()));
            }
            ContextEvent::ComponentRemoved { component, .. } => {
                log.push(format!("removed {:?}", component.get::<Path>()));
            }
            _ => {}
        }
    });
    let e = game.create_entity_with(path(&[1])).unwrap();
    game.replace(e, path(&[2])).unwrap();
    game.remove::<Path>(e).unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        ["replaced Some(Path([1])) -> Some(Path([2]))", "removed Some(Path([2]))"]
    );
    assert_eq!(game.pool::<Path>().len(), 2);
}

#[test]
fn a_collector_keeping_removed_values_keeps_its_own_copy() {
    let mut game = Context::new();
    let left = game.add_collector(Matcher::all_of::<Path>().removed().keep_removed::<Path>());
    let entities: Vec<Entity> = (0..3)
        .map(|i| game.create_entity_with(path(&[i, i + 1])).unwrap())
        .collect();
    for &e in &entities {
        game.remove::<Path>(e).unwrap();
    }
    assert_eq!(game.pool::<Path>().len(), 3);
    // Hand the pooled values out and fill them: the kept copies do not change.
    let mut reused: Vec<Path> = (0..3).map(|_| game.pool::<Path>().take()).collect();
    for p in &mut reused {
        p.0.push(99);
    }
    let collector = game.collector(left).unwrap();
    assert_eq!(collector.entities(), entities);
    for (i, &e) in entities.iter().enumerate() {
        let i = i as u32;
        assert_eq!(collector.removed::<Path>().get(e), Some(&path(&[i, i + 1])));
    }
    game.collector_mut(left).unwrap().clear();
    check(&game);
}

#[test]
fn an_index_keyed_on_a_pooled_component_stays_current() {
    let mut game = Context::new();
    let by_first = game
        .add_index(EntityIndex::new("first", |p: &Path| p.0.first().copied().unwrap_or(0)))
        .unwrap();
    let e = game.create_entity_with(path(&[7, 8])).unwrap();
    assert_eq!(game.index(by_first).unwrap().get(&7), [e]);
    let mut next = game.pool::<Path>().take();
    next.0.push(9);
    game.replace(e, next).unwrap();
    assert!(game.index(by_first).unwrap().get(&7).is_empty());
    assert_eq!(game.index(by_first).unwrap().get(&9), [e]);
    game.remove::<Path>(e).unwrap();
    assert!(game.index(by_first).unwrap().get(&9).is_empty());
    assert_eq!(game.pool::<Path>().len(), 2);
    check(&game);
}

#[test]
fn modify_with_observers_clones_into_a_pooled_value() {
    let mut game = Context::new();
    let updates = Arc::new(AtomicUsize::new(0));
    let count = updates.clone();
    game.subscribe(move |event: &ContextEvent<'_>| {
        if let ContextEvent::ComponentReplaced { old, new, .. } = event {
            assert_ne!(old.get::<Path>(), new.get::<Path>());
            count.fetch_add(1, Ordering::SeqCst);
        }
    });
    let e = game.create_entity_with(path(&[1])).unwrap();
    game.pool().recycle(path(&[]));
    game.modify(e, |p: &mut Path| p.0.push(2)).unwrap();
    assert_eq!(updates.load(Ordering::SeqCst), 1);
    assert_eq!(game.get::<Path>(e).unwrap(), &path(&[1, 2]));
    assert_eq!(game.pool::<Path>().len(), 1, "the old value's clone went back");
    let group = game.add_group(Matcher::all_of::<Path>());
    assert_eq!(game.modify_each::<Path, ()>(group, |p, ()| p.0.push(3)).unwrap(), 1);
    assert_eq!(updates.load(Ordering::SeqCst), 2);
    assert_eq!(game.pool::<Path>().len(), 1);
}

#[test]
fn churning_pooled_components_allocates_nothing_once_warm() {
    let mut game = Context::new();
    let left = game.add_collector(Matcher::all_of::<Path>().removed().keep_removed::<Path>());
    let entities: Vec<Entity> = (0..scale(200))
        .map(|i| game.create_entity_with(Position { x: i as f32, y: 0.0 }).unwrap())
        .collect();
    let frame = |game: &mut Context| {
        for (i, &e) in entities.iter().enumerate() {
            let mut p = game.pool::<Path>().take();
            p.0.extend([i as u32, 1, 2, 3]);
            game.add(e, p).unwrap();
            let mut note = game.pool::<Note>().take();
            note.0.push_str("a note that needs the heap");
            game.add(e, note).unwrap();
        }
        for &e in &entities {
            game.remove::<Path>(e).unwrap();
            game.remove::<Note>(e).unwrap();
        }
        game.collector_mut(left).unwrap().clear();
    };
    game.pool::<Path>().set_capacity(entities.len());
    game.pool::<Note>().set_capacity(entities.len());
    for _ in 0..3 {
        frame(&mut game);
    }
    let info = allocation_counter::measure(|| {
        for _ in 0..3 {
            frame(&mut game);
        }
    });
    assert_eq!(info.count_total, 0, "steady-state pooled churn allocated: {info:?}");
    assert_eq!(game.pool::<Path>().len(), entities.len());
    check(&game);
}

#[test]
fn a_panicking_recycle_during_destroy_leaves_the_context_consistent() {
    #[derive(Debug, Default)]
    struct Fragile(#[allow(dead_code)] Vec<u8>);
    impl Recycle for Fragile {
        fn recycle(&mut self) {
            panic!("recycle failed");
        }
    }
    reactecs::component!(pooled Fragile);

    let counter = Counter::default();
    let mut game = Context::new();
    let e = game
        .create_entity_with((
            counter.make("before"),
            Fragile(vec![1]),
            CountedToo(counter.make("after")),
        ))
        .unwrap();
    let other = game.create_entity_with(Position { x: 1.0, y: 1.0 }).unwrap();
    // The panic goes on, and it is the recycle's.
    assert_panics("recycle failed", || game.destroy_entity(e));
    assert!(!game.is_alive(e) && game.is_alive(other));
    assert_eq!(counter.live(), 0, "the entity's other values were dropped");
    assert_eq!(game.pool::<Fragile>().len(), 0);
    check(&game);
}
