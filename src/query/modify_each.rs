//! `Context::modify_each`: a batch write through `&mut` that observers hear
//! of, as if each value had been replaced.

use std::panic::{self, AssertUnwindSafe};

use smallvec::SmallVec;

use super::param::{Access, ReadOnlyQueryParam};
use crate::collectors::CollectorKey;
use crate::component::Component;
use crate::context::Context;
use crate::error::Error;
use crate::event::ContextEvent;
use crate::group::{GroupEvent, GroupId};
use crate::indices::IndexKey;
use crate::storage::{ColumnAccess, ComponentRef};

impl Context {
    /// Changes component `T` of every entity of `group` through `&mut`, passing
    /// the entity's `Q` items too (e.g. `&Velocity`, or `(Entity, &Velocity)`),
    /// and tells observers as if each value had been [`replace`](Context::replace)d:
    /// `ComponentReplaced` (old and new value) and the `Updated` event of each
    /// group watching `T`; entity indices keyed on `T` move each entity to its
    /// new keys. When nothing observes and no index is keyed on `T`, no value
    /// is cloned. Returns the number of entities visited (members of `group`
    /// that have `T` and `Q`'s components). If `f`, or the key function of an
    /// index, panics, the entities visited before keep their new values; an
    /// entity whose key function panicked gets its old value back.
    ///
    /// # Errors
    /// [`Error::UnknownGroup`]; [`Error::QueryAliasing`] if `Q` reads `T`.
    /// [`Error::DuplicatePrimaryKey`] if `f` gives an entity a key that a
    /// primary index has for another entity: that entity's `T` is put back
    /// as it was (no event fires for it), and `modify_each` stops there; the
    /// entities visited before it keep their new values (their events have
    /// fired). Keys are checked entity by entity, so two entities cannot swap
    /// keys in one call.
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Clone, Debug)] struct Position(f32);
    /// struct Velocity(f32);
    /// reactecs::component!(Position, Velocity);
    ///
    /// let mut game = Context::new();
    /// game.create_entity_with((Position(0.0), Velocity(2.0)))?;
    /// let movers = game.group(Matcher::all_of::<(Position, Velocity)>());
    /// let replaced = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    /// let seen = replaced.clone();
    /// game.subscribe(move |event: &ContextEvent<'_>| {
    ///     if let ContextEvent::ComponentReplaced { .. } = event {
    ///         seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    ///     }
    /// });
    /// let moved = game.modify_each::<Position, &Velocity>(movers, |pos, vel| pos.0 += vel.0)?;
    /// assert_eq!(moved, 1);
    /// assert_eq!(replaced.load(std::sync::atomic::Ordering::Relaxed), 1);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn modify_each<T, Q>(&mut self, group: GroupId, mut f: impl FnMut(&mut T, Q::Item<'_>)) -> Result<usize, Error>
    where
        T: Component + Clone,
        Q: ReadOnlyQueryParam,
    {
        let index = self.groups.lookup(group, self.name)?;
        let id = T::component_id();
        let mut access = Access::of::<Q>();
        access.add(id, true, true);
        access.check(self.name)?;
        let make = ComponentRef::maker::<T>(T::component_info());
        let matcher = self.groups.get(index).matcher.clone();
        let mut visited = 0;
        let Context {
            archetypes,
            groups,
            subscribers,
            collectors,
            indices,
            entities: slots,
            name,
            ..
        } = self;
        for archetype in archetypes.iter_mut() {
            let set = archetype.set();
            if archetype.len() == 0 || !set.is_superset(&access.required) || !matcher.matches_components(set) {
                continue;
            }
            // Groups whose collectors take the replacement, and those whose
            // subscribers need the values (only these make a clone).
            let watchers: SmallVec<[u32; 4]> = groups
                .of_archetype(archetype.id())
                .iter()
                .copied()
                .filter(|&g| groups.get(g).matcher.watches(id) && groups.get(g).has_consumers())
                .collect();
            let mut listening = watchers.clone();
            listening.retain(|g| groups.get(*g).handler_count() != 0);
            let observed = !subscribers.is_empty() || !listening.is_empty();
            // The collectors those groups feed with replacements, found once.
            let direct: SmallVec<[CollectorKey; 4]> = watchers
                .iter()
                .flat_map(|&g| groups.get(g).collectors.iter())
                .filter(|(_, trigger)| trigger.on_updated())
                .map(|&(key, _)| key)
                .collect();
            // The entity indices keyed on `T` that follow those groups (they
            // need the old value, to put back if they refuse the new one).
            let keyed: SmallVec<[IndexKey; 4]> = if indices.any_active() {
                groups
                    .of_archetype(archetype.id())
                    .iter()
                    .filter(|&&g| groups.get(g).matcher.watches(id))
                    .flat_map(|&g| indices.keyed_on(&groups.get(g).indices, id))
                    .collect()
            } else {
                SmallVec::new()
            };
            let (direct, listening) = (direct.as_slice(), listening.as_slice());
            let mut columns = ColumnAccess::exclusive(archetype);
            let lens = columns.chunk_lens();
            let mut entities = columns.entities();
            let (Some(mut values), Some(mut state)) = (columns.write::<T>(id), Q::fetch(&mut columns)) else {
                debug_assert!(false, "modify_each skipped an archetype it accepted");
                continue;
            };
            for len in lens {
                let chunk = values.next().unwrap_or_default();
                let rows = Q::rows(Q::next_chunk(&mut state, len), len);
                let entity_chunk = entities.next().unwrap_or_default();
                visited += chunk.len();
                for ((value, item), &entity) in chunk.iter_mut().zip(rows).zip(entity_chunk) {
                    let before = (observed || !keyed.is_empty()).then(|| value.clone());
                    f(value, item);
                    if !keyed.is_empty() {
                        let new = make.make(&*value);
                        let prepared = panic::catch_unwind(AssertUnwindSafe(|| {
                            indices.prepare(&keyed, Some(entity), |c| (c == id).then_some(new), name)
                        }));
                        match prepared {
                            Ok(Ok(())) => indices.replaced(&keyed, entity, id, slots),
                            Ok(Err(refused)) => {
                                *value = before.expect("cloned for the indices");
                                return Err(refused);
                            }
                            Err(payload) => {
                                *value = before.expect("cloned for the indices");
                                panic::resume_unwind(payload);
                            }
                        }
                    }
                    for &key in direct {
                        collectors.collect(key, entity, slots);
                    }
                    let Some(before) = before.filter(|_| observed) else {
                        continue;
                    };
                    let (old, new) = (make.make(&before), make.make(&*value));
                    for &g in listening {
                        let group = groups.id(g);
                        groups.emit(
                            g,
                            &GroupEvent::Updated {
                                group,
                                entity,
                                old,
                                new,
                            },
                        );
                    }
                    if !subscribers.is_empty() {
                        subscribers.emit(&ContextEvent::ComponentReplaced { entity, old, new });
                    }
                }
            }
        }
        Ok(visited)
    }
}
