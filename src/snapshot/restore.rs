//! Restoring a snapshot (feature `serde`), through the registry
//! (`restore`, within the caller's `RestoreLimits`)
//! or typed (`restore_of`): checking what was read, then
//! creating the entities in order, each run of entities with the same
//! components in one go, each entity in one step with its components (see
//! the `snapshot` module docs). What order the restored context iterates
//! in is documented on `restore` ("Order after a restore").

use serde::Deserializer;
use smallvec::SmallVec;

use crate::context::Context;
use crate::entity::Entity;
use crate::error::Error;
use crate::id::{CollectorId, ComponentId};
use crate::snapshot::{
    ARCHETYPE_BYTES, Budget, Column, Parsed, ReadColumn, Registered, RestoreLimits, SnapshotTuple, TypedReader,
    checked_ids, dangling, parse,
};
use crate::storage::{BundleId, ComponentSet, Location};

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
    /// # Order after a restore
    /// A restore keeps the creation *order* of the saved entities, not their
    /// creation indices, slots or rows:
    /// - Creation order and indices: the restored entities are created in
    ///   the saved context's creation order, with creation indices `0..n`.
    ///   Those equal the indices before saving only if the saved entities
    ///   had `0..n` (none destroyed since the context was new or
    ///   [`reset`](Context::reset)); destroyed entities are not in a
    ///   snapshot, so the indices after a gap move down.
    /// - [`entities`](Context::entities) (slot order): the restored
    ///   entities take slots `0..n` in creation order, so `entities()` lists
    ///   them in creation order. Before saving it listed slot order, which
    ///   differs once a destroyed entity's slot was reused.
    /// - Groups and queries go archetype by archetype, in the order this
    ///   context made its archetypes (in a new context: the order of the
    ///   first restored entity of each), rows in chunk order. Each entity
    ///   is created in one step with its components, so each archetype's
    ///   rows are in creation order; except that values of
    ///   [`MapEntities`](crate::MapEntities) types are added after every
    ///   entity is created, which moves their holders to an archetype made
    ///   then, and the row each leaves is filled by the archetype's last
    ///   row. Flags and sparse components keep no entity out of its
    ///   archetype, so they change nothing here. Before saving, moves and
    ///   destructions had reordered rows and archetypes were made in the
    ///   order of the context's history, so group and query order is in
    ///   general not the order before saving. It is the same when the saved
    ///   context's storage already had this layout (for example: every
    ///   entity created with its final components, none destroyed, moved or
    ///   holding a `MapEntities` value).
    /// - Deterministic: one snapshot restored into new contexts gives the
    ///   same order everywhere (groups made before or after the restore
    ///   alike), and a snapshot of the restored context restores to the same
    ///   orders again; so a server and its clients loading one save iterate
    ///   alike.
    ///
    /// To check a round trip, compare by creation order, not by iteration
    /// order: [`diff`](Context::diff) matches entities that way.
    ///
    /// `limits` bound the entities and bytes the input may make the restore
    /// take: [`RestoreLimits::default()`] (at most 65,536 entities that
    /// hold no value) for your own saves; tighter ones for input from
    /// untrusted sources (see [`RestoreLimits`] and the
    /// [`snapshot`](crate::snapshot!) module docs, "Untrusted input").
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
    ///   changes. Also, naming the bound, if the snapshot holds more
    ///   entities, more entities without values, or takes more bytes than
    ///   `limits` allow: reading stops at the bound, and nothing is created.
    /// - [`Error::WrongContext`] if the snapshot has a component this
    ///   (declared) context does not accept; nothing changes.
    /// - [`Error::DuplicatePrimaryKey`] if two of the snapshot's entities
    ///   would have one key in a
    ///   [`PrimaryEntityIndex`](crate::PrimaryEntityIndex) of this context
    ///   (the error names them as placeholders: `p3` is the snapshot's
    ///   entity 3). The keys are checked before any entity is created:
    ///   nothing changes, no event fires.
    ///
    /// # Example
    /// ```
    /// use reactecs::{Context, Error, Matcher, RestoreLimits};
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
    /// let moving = loaded.add_group(Matcher::all_of::<Spot>());
    /// loaded.restore(&mut postcard::Deserializer::from_bytes(&bytes), RestoreLimits::default())?;
    /// assert_eq!(loaded.group(moving)?.len(), 1);
    ///
    /// // Truncated input is an error, and leaves the target empty.
    /// let mut other = Context::new();
    /// let cut = &bytes[..bytes.len() - 1];
    /// let err = other.restore(&mut postcard::Deserializer::from_bytes(cut), RestoreLimits::default()).unwrap_err();
    /// assert!(matches!(err, Error::InvalidSnapshot { .. }));
    /// assert!(other.is_empty());
    /// // Restoring into a context with entities is refused.
    /// let err = loaded.restore(&mut postcard::Deserializer::from_bytes(&bytes), RestoreLimits::default()).unwrap_err();
    /// assert!(matches!(err, Error::RestoreTargetNotEmpty { .. }));
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// Input from strangers, within tighter limits:
    /// ```
    /// use reactecs::{Context, Error, RestoreLimits};
    /// #[derive(serde::Serialize, serde::Deserialize)]
    /// struct Loot(u32);
    /// reactecs::component!(Loot);
    /// reactecs::snapshot!(Loot);
    ///
    /// let mut game = Context::new();
    /// for amount in 0..100 {
    ///     game.create_entity_with(Loot(amount))?;
    /// }
    /// let bytes = postcard::to_stdvec(&game.snapshot()).unwrap();
    ///
    /// let small = RestoreLimits::default().max_entities(10);
    /// let mut loaded = Context::new();
    /// let err = loaded.restore(&mut postcard::Deserializer::from_bytes(&bytes), small).unwrap_err();
    /// assert!(matches!(err, Error::InvalidSnapshot { .. }));
    /// assert!(loaded.is_empty());
    ///
    /// let fair = RestoreLimits::default().max_bytes(64 * bytes.len() + 64 * 1024);
    /// loaded.restore(&mut postcard::Deserializer::from_bytes(&bytes), fair)?;
    /// assert_eq!(loaded.len(), 100);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn restore<'de, D: Deserializer<'de>>(&mut self, input: D, limits: RestoreLimits) -> Result<(), Error> {
        self.restore_with(input, &Registered, limits)
    }

    /// Restores a snapshot as [`restore`](Context::restore) does (same
    /// format, same checks, same result), reading the values of the
    /// component types of `C` (one type, or a tuple of up to 12) with their
    /// own `Deserialize`, within `limits` (as for `restore`), compiled
    /// for the format of `input` (no erased
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
    /// use reactecs::{Context, Error, RestoreLimits};
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
    /// loaded.restore_of::<(Mark, Pace)>(&mut postcard::Deserializer::from_bytes(&bytes), RestoreLimits::default())?;
    /// let all: Vec<_> = loaded.entities().collect();
    /// assert_eq!(all.len(), 3);
    /// assert_eq!(loaded.get::<Pace>(all[0])?, &Pace(3.0));
    /// assert_eq!(loaded.get::<Mark>(all[1])?, &Mark(4.0, 5.0));
    /// assert!(loaded.entity(all[2])?.is_empty());
    ///
    /// // Truncated input is an error, and leaves the target empty.
    /// let mut other = Context::new();
    /// let cut = &bytes[..bytes.len() - 1];
    /// let err = other.restore_of::<(Mark, Pace)>(&mut postcard::Deserializer::from_bytes(cut), RestoreLimits::default()).unwrap_err();
    /// assert!(matches!(err, Error::InvalidSnapshot { .. }));
    /// assert!(other.is_empty());
    /// # Ok::<(), Error>(())
    /// ```
    pub fn restore_of<'de, C: SnapshotTuple>(
        &mut self,
        input: impl Deserializer<'de>,
        limits: RestoreLimits,
    ) -> Result<(), Error> {
        let ids = checked_ids::<C>(self.name)?;
        self.restore_with(input, &TypedReader::<C>::new(ids), limits)
    }

    /// Restores a snapshot whose values `reader` reads, within `limits`.
    fn restore_with<'de, D: Deserializer<'de>, R: ReadColumn>(
        &mut self,
        input: D,
        reader: &R,
        limits: RestoreLimits,
    ) -> Result<(), Error> {
        let held = self.entities.len() + self.entities.disabled_len();
        if held > 0 {
            return Err(Error::RestoreTargetNotEmpty {
                context: self.name,
                entities: held,
            });
        }
        let budget = Budget::new(&limits);
        let mut parsed = parse(input, reader, &budget).map_err(|error| match budget.exceeded() {
            true => self.over_budget(&budget, format!("its values ({error})")),
            false => self.invalid_snapshot(error.to_string()),
        })?;
        self.check_snapshot(&mut parsed, &limits)?;
        let plan = self.plan_restore(parsed, &limits, &budget)?;
        self.check_restored_keys(&plan)?;
        // As a new context: creation indices and slots from 0.
        self.entities.restart_creation_indices();
        self.entities.relink_free_slots();
        let restored = self.restore_entities(plan);
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
    fn check_snapshot(&self, parsed: &mut Parsed, limits: &RestoreLimits) -> Result<(), Error> {
        let count = parsed.entities;
        if count > u32::MAX - 2 {
            return Err(self.invalid_snapshot(format!("it claims {count} entities, more than a snapshot holds")));
        }
        if count > limits.max_entities {
            return Err(self.invalid_snapshot(format!(
                "it claims {count} entities, more than the {} its `RestoreLimits` allow (`max_entities`)",
                limits.max_entities
            )));
        }
        // Entities that hold no value cost the input nothing: a count with
        // fewer values behind it than that is refused before anything is
        // allocated for the entities (the exact count is checked when the
        // holdings are known).
        let values: usize = parsed.columns.iter().map(|column| column.positions().len()).sum();
        if count as usize > values.saturating_add(limits.max_empty_entities as usize) {
            return Err(self.too_many_empty(count, values.min(count as usize), limits));
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

    /// [`Error::InvalidSnapshot`]: `count` entities of which only `holders`
    /// hold a value, more without than `limits` allow.
    fn too_many_empty(&self, count: u32, holders: usize, limits: &RestoreLimits) -> Error {
        self.invalid_snapshot(format!(
            "it claims {count} entities, of which {} hold no value, more than the {} its `RestoreLimits` allow \
             (`max_empty_entities`: entities none of whose components are listed in `snapshot!`)",
            count as usize - holders,
            limits.max_empty_entities
        ))
    }

    /// Sorts a checked snapshot's columns for creation (plain ones, then
    /// those whose values map entities), finds which entity holds which and
    /// the runs of entities holding the same, checks the entities holding
    /// nothing against `limits`, and charges `budget` for the entities and
    /// the archetypes new to this context: all before any entity is created.
    fn plan_restore(&self, parsed: Parsed, limits: &RestoreLimits, budget: &Budget) -> Result<RestorePlan, Error> {
        let count = parsed.entities as usize;
        if !budget.charge(count.saturating_mul(RestoreLimits::ENTITY_BYTES)) {
            return Err(self.over_budget(budget, format!("its {count} entities")));
        }
        let (mut plain, mut mapped): (Columns, Columns) =
            parsed.columns.into_iter().partition(|column| !column.maps_entities());
        // By id, so that each entity's components come in id order, as a
        // `ComponentSet` lists them.
        plain.sort_by_key(|column| column.id());
        mapped.sort_by_key(|column| column.id());
        let held = {
            let columns: SmallVec<[&[u32]; 16]> =
                plain.iter().chain(&mapped).map(|column| column.positions()).collect();
            Holdings::of(&columns, count).map_err(|reason| self.invalid_snapshot(reason))?
        };
        let (mut runs, mut sets, mut empty) = (Vec::new(), std::collections::HashSet::new(), 0);
        let mut start = 0;
        while start < count {
            let end = held.run_end(start);
            let mut present = held.columns_of(start).peekable();
            if present.peek().is_none() {
                empty += end - start;
            }
            let set: ComponentSet = present.filter(|&k| k < plain.len()).map(|k| plain[k].id()).collect();
            if !self.restore_plans.contains_key(&set) && sets.insert(set) && !budget.charge(ARCHETYPE_BYTES) {
                return Err(self.over_budget(budget, format!("the archetypes of its {} component sets", sets.len())));
            }
            runs.push(end);
            start = end;
        }
        if empty > limits.max_empty_entities as usize {
            return Err(self.too_many_empty(parsed.entities, count - empty, limits));
        }
        Ok(RestorePlan {
            plain,
            mapped,
            held,
            runs,
        })
    }

    /// Files the snapshot's values in the target's active entity indices,
    /// under placeholder entities (the snapshot's positions), and empties
    /// them again: a key two restored entities would share in a primary
    /// index is refused here, before any entity is created or any event
    /// fires. (The target has no entities, so its indices are empty.)
    fn check_restored_keys(&mut self, plan: &RestorePlan) -> Result<(), Error> {
        let columns: SmallVec<[&dyn Column; 16]> = plan.plain.iter().chain(&plan.mapped).map(|c| &**c).collect();
        let context = self.name;
        for (_, entry) in self.indices.iter_mut() {
            let store = &mut *entry.store;
            let component = store.component();
            let Some(keyed) = columns.iter().position(|column| column.id() == component) else {
                continue;
            };
            if !store.is_active() {
                continue;
            }
            let matcher = store.matcher().clone();
            let filed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                for (n, &position) in columns[keyed].positions().iter().enumerate() {
                    let held = |id| plan.held.columns_of(position as usize).any(|k| columns[k].id() == id);
                    if !matcher.matches_by(held) {
                        continue;
                    }
                    let Some(value) = columns[keyed].value_at(n) else {
                        continue;
                    };
                    let entity = Entity::placeholder(position);
                    if let Err((key, holder)) = store.prepare(Some(entity), value) {
                        return Err((key, holder, entity));
                    }
                    store.file_prepared(entity);
                }
                Ok(())
            }));
            store.clear(&mut |_| {});
            match filed {
                Ok(Ok(())) => {}
                Ok(Err((key, holder, entity))) => {
                    return Err(Error::DuplicatePrimaryKey {
                        context,
                        index: store.name(),
                        key,
                        holder,
                        entity: Some(entity),
                    });
                }
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        Ok(())
    }

    /// [`Error::InvalidSnapshot`]: `what` takes more bytes than `budget`
    /// had left.
    fn over_budget(&self, budget: &Budget, what: String) -> Error {
        self.invalid_snapshot(format!(
            "{what} take more than the {} bytes its `RestoreLimits` allow (`max_bytes`)",
            budget.limit()
        ))
    }

    /// Creates the entities of a checked snapshot: run by run of entities
    /// with the same components; those nothing hears of straight into
    /// storage, as [`create_entities_with`](Context::create_entities_with)
    /// does.
    fn restore_entities(&mut self, plan: RestorePlan) -> Result<(), Error> {
        let RestorePlan {
            mut plain,
            mut mapped,
            held,
            runs,
        } = plan;
        let count = held.count;
        let mut handles = Vec::new();
        handles
            .try_reserve_exact(count)
            .and_then(|()| self.entities.try_reserve(count))
            .map_err(|error| self.invalid_snapshot(format!("its {count} entities cannot be had: {error}")))?;
        let mut start = 0;
        for end in runs {
            let present: SmallVec<[usize; 16]> = held.columns_of(start).filter(|&k| k < plain.len()).collect();
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
            .expect("a ComponentSet lists each component once, so the bundle names none twice");
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
            self.clear_collector(id)
                .expect("the id was just listed from this context's own collectors");
        }
        if self.entities.len() + self.entities.disabled_len() == 0 {
            self.entities.restart_creation_indices();
            self.entities.relink_free_slots();
        }
    }
}

/// A snapshot's columns of values.
type Columns = Vec<Box<dyn Column>>;

/// A checked snapshot, ready to be created: its columns, plain ones (in id
/// order) and those whose values map entities, which entity holds which
/// (over both, in that order), and the ends of the runs of entities that
/// hold the same columns.
struct RestorePlan {
    plain: Columns,
    mapped: Columns,
    held: Holdings,
    runs: Vec<usize>,
}

/// `len` zero words, or why they cannot be had.
fn zeroed(len: usize) -> Result<Vec<u64>, String> {
    let mut words = Vec::new();
    words
        .try_reserve_exact(len)
        .map_err(|error| format!("{len} words of bookkeeping cannot be had: {error}"))?;
    words.resize(len, 0);
    Ok(words)
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
    /// The holdings of the `count` entities in the columns whose positions
    /// `columns` lists (each below `count`: checked).
    fn of(columns: &[&[u32]], count: usize) -> Result<Self, String> {
        let words = columns.len().div_ceil(64);
        let mut bits = zeroed(count.saturating_mul(words))?;
        for (k, positions) in columns.iter().enumerate() {
            for &position in *positions {
                bits[position as usize * words + k / 64] |= 1 << (k % 64);
            }
        }
        Ok(Holdings { count, words, bits })
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
