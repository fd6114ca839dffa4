//! Collectors that keep removed values: an obituary writer.
//!
//! A village of `Villager`s, each with a `Name` and `Health`. Every turn a
//! plague takes health from everyone; a villager at zero health loses its
//! `Health` component (it dies, but stays in the village as a grave). A
//! reactive system waits for villagers who *lost* `Health`: its collector
//! watches `AllOf(Villager, Health)` with a `Removed` trigger, and keeps the
//! removed value (`keep_removed::<Health>()`), so the system can tell how
//! much health each one had when it died (the component is gone from the
//! entity by then). A second reactive system, on the same group with an
//! `Updated` trigger, counts the villagers hurt each turn: a `replace` on a
//! member is an update, not a removal, so the obituary writer never sees it.
//!
//! Run it with `cargo run --example collectors`.

use std::sync::{Arc, Mutex};

use reactecs::prelude::*;

#[derive(Clone, Debug, PartialEq)]
struct Name(&'static str);

#[derive(Clone, Copy, Debug, PartialEq)]
struct Health(i32);

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Villager;

reactecs::component!(Name, Health, Villager);

/// Writes an obituary for each villager who lost `Health`.
struct Obituaries {
    /// Its collector (made in `trigger`), to read the kept values from.
    collector: Option<CollectorId>,
    written: Arc<Mutex<Vec<String>>>,
}

impl ReactiveSystem for Obituaries {
    fn trigger(&mut self, village: &mut Context) -> CollectorId {
        let died = Matcher::all_of::<(Villager, Health)>().removed();
        let id = village.add_collector(CollectorSpec::from(died).keep_removed::<Health>());
        self.collector = Some(id);
        id
    }

    fn try_execute(&mut self, village: &mut Context, dead: &[Entity]) -> SystemResult {
        // The kept values first: reading the collector borrows the village.
        let collector = village.collector(self.collector.ok_or("trigger runs first")?)?;
        let last_health = collector.removed::<Health>();
        let healths = dead
            .iter()
            .map(|&e| {
                last_health
                    .get(e)
                    .map(|health| health.0)
                    .ok_or("a removed value is kept for each")
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut written = self.written.lock().map_err(|_| "the obituary list is poisoned")?;
        for (&e, health) in dead.iter().zip(healths) {
            let name = village.get::<Name>(e)?;
            written.push(format!("{} died (last health {health})", name.0));
        }
        Ok(())
    }
}

/// Counts the villagers hurt (their `Health` replaced) each turn.
struct Hurt(Arc<Mutex<Vec<String>>>);

impl ReactiveSystem for Hurt {
    fn trigger(&mut self, village: &mut Context) -> CollectorId {
        village.add_collector(Matcher::all_of::<(Villager, Health)>().updated())
    }

    fn try_execute(&mut self, _village: &mut Context, hurt: &[Entity]) -> SystemResult {
        let mut written = self.0.lock().map_err(|_| "the log is poisoned")?;
        written.push(format!("{} hurt and still standing", hurt.len()));
        Ok(())
    }
}

/// Takes `damage` health from every living villager; those at zero die.
struct Plague(i32);

impl System for Plague {
    fn try_execute(&mut self, village: &mut Context) -> SystemResult {
        let living: Vec<(Entity, Health)> = village
            .query::<(Entity, &Health)>()
            .iter()
            .map(|(e, h)| (e, *h))
            .collect();
        for (e, health) in living {
            let left = health.0 - self.0;
            if left <= 0 {
                village.remove::<Health>(e)?;
            } else {
                village.replace(e, Health(left))?;
            }
        }
        Ok(())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut village = Context::with_name("Village");
    for (name, health) in [("Ada", 5), ("Brann", 12), ("Cleo", 3), ("Dov", 9)] {
        village.create_entity_with((Villager, Name(name), Health(health)))?;
    }
    let written = Arc::new(Mutex::new(Vec::new()));
    let mut turn = Feature::new("Village")
        .with(Plague(4))
        .with(Reactive::new(Obituaries {
            collector: None,
            written: written.clone(),
        }))
        .with(Reactive::new(Hurt(written.clone())));
    turn.try_initialize(&mut village)?;
    let mut transcript = Vec::new();
    for day in 1..=4 {
        turn.try_execute(&mut village)?;
        turn.try_cleanup(&mut village)?;
        let living = village.query::<&Health>().iter().count();
        println!("day {day}: {living} alive");
        for line in written.lock().map_err(|_| "poisoned")?.drain(..) {
            println!("  {line}");
            transcript.push(line);
        }
    }
    let graves = village.query::<(&Name, &Villager)>().iter().count() - village.query::<&Health>().iter().count();
    println!("{graves} graves");
    assert_eq!(graves, 4, "the plague took everyone in four days");
    // One obituary per death, with the health the collector kept (the entity
    // had lost it by then); the hurt (their `Health` replaced) went to `Hurt`
    // alone: a replace is an update, not a removal.
    assert_eq!(
        transcript,
        [
            "Cleo died (last health 3)",
            "3 hurt and still standing",
            "Ada died (last health 1)",
            "2 hurt and still standing",
            "Dov died (last health 1)",
            "Brann died (last health 4)",
        ]
    );
    Ok(())
}
