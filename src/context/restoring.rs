//! Restoring a snapshot (feature `serde`), through the registry
//! (`restore`) or typed (`restore_of`): checking what was read, then
//! creating the entities in order, each run of entities with the same
//! components in one go, each entity in one step with its components (see
//! the `snapshot` module docs).

use std::collections::HashMap;

use serde::Deserializer;
use smallvec::SmallVec;

use super::Context;
use crate::component::ComponentId;
use crate::entity::Entity;
use crate::error::Error;
use crate::id::CollectorId;
use crate::snapshot::{
    Column, Parsed, ReadColumn, Registered, SnapshotTuple, TypedReader, checked_ids, dangling, parse,
};
use crate::storage::{BundleId, ComponentSet, Location};

/// The bundle plans made for the component sets of restored entities, so
/// that restoring again after a `reset` makes no new ones.
pub(crate) type RestorePlans = HashMap<ComponentSet, BundleId>;

impl Context {
    /// Restores a snapshot (made by [`snapshot`](Context::snapshot) and
    /// written in any serde format) into this context, which must have no
    /// entities. Its entities are created in the snapshot's order (creation
    /// indices `0..n`), with events as [`create_entity_with`](Context::create_entity_with)
    /// fires them; the values of components that implement
    /// [`MapEntities`](crate::MapEntities) are added right after all the
    /// entities are created, their handles mapped to the restored entities.
    /// The context's groups, collectors and entity indices see the restored
    /// entities as they see any creation.
    ///
    /// Give the format's deserializer: `&mut serde_json::Deserializer::from_str(&text)`,
    /// `&mut postcard::Deserializer::from_bytes(&bytes)`. (Input after the
    /// snapshot is not read: call the deserializer's own end check, such as
    /// `serde_json::Deserializer::end`, if it matters.) Where the types are
    /// known, [`restore_of`](Context::restore_of) restores the same, several
    /// times faster.
    ///
    /// # Errors
    /// Nothing is left behind by an error: the context has no entities
    /// afterwards, and is usable.
    /// - [`Error::RestoreTargetNotEmpty`] if the context has entities (alive,
    ///   or destroyed and still retained); nothing changes.
    /// - [`Error::InvalidSnapshot`] if the input is not a snapshot this
    ///   program can restore: malformed or truncated, a component name that
    ///   no type listed in [`snapshot!`](crate::snapshot!) has, a value of
    ///   the wrong shape, an entity position out of range, a component
    ///   listed twice for one entity, two holders of a unique component.
    ///   The input is read in full before any entity is created, so nothing
    ///   changes.
    /// - [`Error::WrongContext`] if the snapshot has a component this
    ///   (declared) context does not accept; nothing changes.
    /// - [`Error::DuplicatePrimaryKey`] (or another refusal of a creation by
    ///   the context) if the snapshot's values clash with a
    ///   [`PrimaryEntityIndex`](crate::PrimaryEntityIndex) of this context:
    ///   the entities restored so far are destroyed again (handlers see them
    ///   come and go), the collectors are emptied, and creation indices
    ///   start at 0 again.
    ///
    /// # Example
    /// ```
    /// use reactecs::{Context, Error, Matcher};
    /// #[derive(serde::Serialize, serde::Deserialize)]
    /// struct Spot(f32, f32);
    /// reactecs::component!(Spot);
    /// reactecs::snapshot!(Spot);
    ///
    /// let mut game = Context::new();
    /// game.create_entity_with(Spot(1.0, 2.0))?;
    /// let bytes = postcard::to_stdvec(&game.snapshot()).unwrap();
    ///
    /// let mut loaded = Context::new();
    /// let moving = loaded.group(Matcher::all_of::<Spot>());
    /// loaded.restore(&mut postcard::Deserializer::from_bytes(&bytes))?;
    /// assert_eq!(loaded.get_group(moving)?.len(), 1);
    ///
    /// // Truncated input is an error, and leaves the target empty.
    /// let mut other = Context::new();
    /// let cut = &bytes[..bytes.len() - 1];
    /// let err = other.restore(&mut postcard::Deserializer::from_bytes(cut)).unwrap_err();
    /// assert!(matches!(err, Error::InvalidSnapshot { .. }));
    /// assert!(other.is_empty());
    /// // Restoring into a context with entities is refused.
    /// let err = loaded.restore(&mut postcard::Deserializer::from_bytes(&bytes)).unwrap_err();
    /// assert!(matches!(err, Error::RestoreTargetNotEmpty { .. }));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn restore<'de, D: Deserializer<'de>>(&mut self, input: D) -> Result<(), Error> {
        self.restore_with(input, &Registered)
    }

    /// Restores a snapshot as [`restore`](Context::restore) does (same
    /// format, same checks, same result), reading the values of the
    /// component types of `C` (one type, or a tuple of up to 12) with their
    /// own `Deserialize`, compiled for the format of `input` (no erased
    /// dispatch): a few times faster. A column of another type listed in
    /// [`snapshot!`](crate::snapshot!) is still read, through the registry
    /// as `restore` reads it; list every type the snapshot holds in `C` for
    /// the full speed. `input` can come from
    /// [`snapshot_of`](Context::snapshot_of) or from
    /// [`snapshot`](Context::snapshot).
    ///
    /// # Errors
    /// [`Error::SnapshotTypeRefused`] if a type of `C` is not listed in
    /// [`snapshot!`](crate::snapshot!), is named twice in `C`, or shares its
    /// declared name with another listed type; nothing changes. Otherwise
    /// those of [`restore`](Context::restore), with its guarantee: the
    /// context has no entities after an error, and is usable.
    ///
    /// # Example
    /// ```
    /// use reactecs::{Context, Error};
    /// #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    /// struct Mark(f32, f32);
    /// #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    /// struct Pace(f32);
    /// reactecs::component!(Mark, Pace);
    /// reactecs::snapshot!(Mark, Pace);
    ///
    /// let mut game = Context::new();
    /// game.create_entity_with((Mark(1.0, 2.0), Pace(3.0)))?;
    /// game.create_entity_with(Mark(4.0, 5.0))?;
    /// game.create_entity();
    /// let bytes = postcard::to_stdvec(&game.snapshot_of::<(Mark, Pace)>()?).unwrap();
    ///
    /// let mut loaded = Context::new();
    /// loaded.restore_of::<(Mark, Pace)>(&mut postcard::Deserializer::from_bytes(&bytes))?;
    /// let all: Vec<_> = loaded.entities().collect();
    /// assert_eq!(all.len(), 3);
    /// assert_eq!(loaded.get::<Pace>(all[0])?, &Pace(3.0));
    /// assert_eq!(loaded.get::<Mark>(all[1])?, &Mark(4.0, 5.0));
    /// assert!(loaded.entity(all[2])?.is_empty());
    ///
    /// // Truncated input is an error, and leaves the target empty.
    /// let mut other = Context::new();
    /// let cut = &bytes[..bytes.len() - 1];
    /// let err = other.restore_of::<(Mark, Pace)>(&mut postcard::Deserializer::from_bytes(cut)).unwrap_err();
    /// assert!(matches!(err, Error::InvalidSnapshot { .. }));
    /// assert!(other.is_empty());
    /// # Ok::<(), Error>(())
    /// ```
    pub fn restore_of<'de, C: SnapshotTuple>(&mut self, input: impl Deserializer<'de>) -> Result<(), Error> {
        let ids = checked_ids::<C>(self.name)?;
        self.restore_with(input, &TypedReader::<C>::new(ids))
    }

    /// Restores a snapshot whose values `reader` reads.
    fn restore_with<'de, D: Deserializer<'de>, R: ReadColumn>(&mut self, input: D, reader: &R) -> Result<(), Error> {
        let held = self.entities.len() + self.entities.disabled_len();
        if held > 0 {
            return Err(Error::RestoreTargetNotEmpty {
                context: self.name,
                entities: held,
            });
        }
        let mut parsed = parse(input, reader).map_err(|error| self.invalid_snapshot(error.to_string()))?;
        self.check_snapshot(&mut parsed)?;
        // As a new context: creation indices and slots from 0.
        self.entities.restart_creation_indices();
        self.entities.relink_free_slots();
        let restored = self.restore_entities(parsed);
        if restored.is_err() {
            self.undo_restore();
        }
        restored
    }

    fn invalid_snapshot(&self, reason: String) -> Error {
        Error::InvalidSnapshot {
            context: self.name,
            reason,
        }
    }

    /// Checks what was read against itself and this context, before any
    /// change.
    fn check_snapshot(&self, parsed: &mut Parsed) -> Result<(), Error> {
        let count = parsed.entities;
        if count > u32::MAX - 2 {
            return Err(self.invalid_snapshot(format!("it claims {count} entities, more than a snapshot holds")));
        }
        for column in &mut parsed.columns {
            self.check_accepts(column.id())?;
            let name = column.name();
            let mut last = None;
            for &position in column.positions() {
                if position >= count {
                    return Err(self.invalid_snapshot(format!(
                        "component `{name}` is given to entity {position}, but the snapshot has {count} entities"
                    )));
                }
                if last.is_some_and(|last| position <= last) {
                    return Err(self.invalid_snapshot(format!(
                        "the values of component `{name}` are not in increasing entity order (entity {position} \
                         after entity {})",
                        last.unwrap_or(0)
                    )));
                }
                last = Some(position);
            }
            if column.positions().len() > 1 && column.id().info().is_some_and(|info| info.is_unique()) {
                return Err(self.invalid_snapshot(format!(
                    "unique component `{name}` is held by {} entities",
                    column.positions().len()
                )));
            }
            let mut out_of_range = None;
            column.map_entities(&mut |entity| {
                if let Some(position) = entity.placeholder_number()
                    && position >= count
                    && entity != dangling()
                {
                    out_of_range = Some(position);
                }
                entity
            });
            if let Some(position) = out_of_range {
                return Err(self.invalid_snapshot(format!(
                    "a value of component `{name}` refers to entity {position}, but the snapshot has {count} entities"
                )));
            }
        }
        Ok(())
    }

    /// Creates the entities of a checked snapshot: run by run of entities
    /// with the same components; those nothing hears of straight into
    /// storage, as [`create_entities_with`](Context::create_entities_with)
    /// does.
    fn restore_entities(&mut self, parsed: Parsed) -> Result<(), Error> {
        let count = parsed.entities as usize;
        let (mut plain, mut mapped): (Vec<_>, Vec<_>) =
            parsed.columns.into_iter().partition(|column| !column.maps_entities());
        // By id, so that each entity's components come in id order, as a
        // `ComponentSet` lists them.
        plain.sort_by_key(|column| column.id());
        mapped.sort_by_key(|column| column.id());
        let held = Holdings::of(&plain, count);
        let mut handles = Vec::with_capacity(count);
        self.entities.reserve(count);
        let mut start = 0;
        while start < count {
            let end = held.run_end(start);
            let present: SmallVec<[usize; 16]> = held.columns_of(start).collect();
            let set: ComponentSet = present.iter().map(|&k| plain[k].id()).collect();
            let plan = self.restore_plan(&set);
            if self.spawns_quietly(plan) {
                // Nothing hears of these creations: storage alone.
                for _ in start..end {
                    handles.push(self.spawn_restored_row(plan, &mut plain, &present).0);
                }
            } else {
                for _ in start..end {
                    handles.push(self.spawn_restored(plan, &mut plain, &present)?);
                }
            }
            start = end;
        }
        let mut map = |entity: Entity| match entity.placeholder_number() {
            Some(position) if (position as usize) < handles.len() => handles[position as usize],
            _ => dangling(),
        };
        for column in &mut mapped {
            column.map_entities(&mut map);
            for index in 0..column.positions().len() {
                let entity = handles[column.positions()[index] as usize];
                column.add_next(self, entity)?;
            }
        }
        Ok(())
    }

    /// The bundle plan for an entity with the components of `set`, in id
    /// order.
    fn restore_plan(&mut self, set: &ComponentSet) -> BundleId {
        if let Some(&plan) = self.restore_plans.get(set) {
            return plan;
        }
        let ids: SmallVec<[ComponentId; 16]> = set.iter().collect();
        let plan = self
            .archetypes
            .register_bundle(None, &ids)
            .expect("a set lists each component once");
        self.routes.sync(&self.archetypes);
        self.restore_plans.insert(set.clone(), plan);
        plan
    }

    /// Creates one entity from the next value of each column of `present`
    /// (in id order, as plan `plan` writes them).
    fn spawn_restored(
        &mut self,
        plan: BundleId,
        columns: &mut [Box<dyn Column>],
        present: &[usize],
    ) -> Result<Entity, Error> {
        let archetype = self.archetypes.bundle_archetype(plan);
        let unique = self.unique_bundle(plan);
        if unique {
            self.check_unique_free(plan)?;
        }
        if !self.routes.is_idle() {
            let value_of = |id| {
                present
                    .iter()
                    .map(|&k| &columns[k])
                    .find(|column| column.id() == id)
                    .and_then(|column| column.peek())
            };
            self.prepare_spawn_with(plan, archetype, value_of)?;
        }
        let ids: SmallVec<[ComponentId; 16]> = present.iter().map(|&k| columns[k].id()).collect();
        let (entity, location) = self.spawn_restored_row(plan, columns, present);
        self.spawned(plan, entity, location, unique, |f| ids.iter().for_each(|&id| f(id)));
        Ok(entity)
    }

    /// Makes the storage row of one entity from the next value of each
    /// column of `present` (in id order, as plan `plan` writes them).
    fn spawn_restored_row(
        &mut self,
        plan: BundleId,
        columns: &mut [Box<dyn Column>],
        present: &[usize],
    ) -> (Entity, Location) {
        self.spawn_row_with(plan, |row| {
            for &k in present {
                columns[k].write_next(row);
            }
        })
    }

    /// Takes a failed restore back: destroys what it created and empties
    /// the collectors (which held nothing before it: the context had no
    /// entities), so every slot is free and creation indices restart.
    fn undo_restore(&mut self) {
        self.destroy_all_entities();
        let collectors: Vec<CollectorId> = self.collectors().map(|c| c.id()).collect();
        for id in collectors {
            self.clear_collector(id).expect("a listed collector exists");
        }
        if self.entities.len() + self.entities.disabled_len() == 0 {
            self.entities.restart_creation_indices();
            self.entities.relink_free_slots();
        }
    }
}

/// Which of a snapshot's columns each of its entities has a value in: a bit
/// per column, `words` words per entity.
struct Holdings {
    /// How many entities there are.
    count: usize,
    words: usize,
    bits: Vec<u64>,
}

impl Holdings {
    /// The holdings of the `count` entities in `columns`, whose positions
    /// are below `count` (checked).
    fn of(columns: &[Box<dyn Column>], count: usize) -> Self {
        let words = columns.len().div_ceil(64);
        let mut bits = vec![0u64; count * words];
        for (k, column) in columns.iter().enumerate() {
            for &position in column.positions() {
                bits[position as usize * words + k / 64] |= 1 << (k % 64);
            }
        }
        Holdings { count, words, bits }
    }

    /// The bits of entity `position`.
    #[inline]
    fn of_entity(&self, position: usize) -> &[u64] {
        &self.bits[position * self.words..(position + 1) * self.words]
    }

    /// The end of the run of entities from `start` that have the columns
    /// `start` has.
    fn run_end(&self, start: usize) -> usize {
        let first = self.of_entity(start);
        (start + 1..self.count)
            .find(|&position| self.of_entity(position) != first)
            .unwrap_or(self.count)
    }

    /// The columns entity `position` has, in order.
    fn columns_of(&self, position: usize) -> impl Iterator<Item = usize> + '_ {
        self.of_entity(position).iter().enumerate().flat_map(|(word, &bits)| {
            (0..64)
                .filter(move |bit| bits & (1 << bit) != 0)
                .map(move |bit| word * 64 + bit)
        })
    }
}
