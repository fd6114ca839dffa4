//! `QueryPlan` and `QueryPlans`: what a query type needs on every call (its
//! column plan, its required components, the archetypes that have them and
//! where its columns sit in each), worked out once per context and kept
//! current as archetypes appear.
//!
//! `query_mut` makes and updates the plan of its query type, so a query run
//! every frame starts with a hash lookup rather than building its access,
//! checking it for aliasing and choosing archetypes; and per archetype it
//! loads its columns' offsets rather than looking each column up and
//! checking its type. `query` (on a shared context, which cannot update
//! anything) uses the plan `query_mut` made for the same query type if there
//! is one: its columns always, its archetypes and offsets if it is current
//! (else the query finds its archetypes and columns itself); with no plan,
//! it works one out for the call.

use std::any::TypeId;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::hash::BuildHasherDefault;

use smallvec::SmallVec;

use crate::error::Error;
use crate::id::ComponentId;
use crate::query_param::{Access, QueryParam};
use crate::storage::{Archetypes, ColumnPlan, PlannedColumns, TypeIdHasher};

/// One query type's plan.
#[derive(Clone)]
pub(crate) struct QueryPlan {
    /// The columns its parameters take from each archetype, placed in those
    /// of the first `seen` archetypes with every required component.
    pub(super) columns: ColumnPlan,
    /// The components stored in archetypes that an entity must have (those
    /// not behind an `Option`).
    pub(super) required: SmallVec<[ComponentId; 8]>,
    /// The flag and sparse components an entity must have: checked entity
    /// by entity.
    pub(super) required_sparse: SmallVec<[ComponentId; 4]>,
    seen: usize,
}

impl QueryPlan {
    /// `Q`'s plan, with no archetype looked at yet; [`Error::QueryAliasing`]
    /// (naming `context`) if `Q` writes a component it also names elsewhere
    /// (never for a query that only reads).
    pub(crate) fn of<Q: QueryParam>(context: &'static str) -> Result<Self, Error> {
        let access = Access::of::<Q>();
        Ok(QueryPlan {
            columns: access.plan(context)?,
            required: access.required().collect(),
            required_sparse: access.required_sparse().collect(),
            seen: 0,
        })
    }

    /// Its column plan, with where it is placed.
    #[inline]
    pub(crate) fn column_plan(&self) -> &ColumnPlan {
        &self.columns
    }

    /// The columns its parameters take, to lend the sparse sets for.
    #[inline]
    pub(crate) fn columns(&self) -> PlannedColumns<'_> {
        self.columns.columns()
    }

    /// Whether an entity whose archetype components are `set` has every
    /// component it requires that archetypes store.
    #[inline]
    pub(crate) fn fits(&self, set: &crate::storage::ComponentSet) -> bool {
        self.required.iter().all(|&id| set.contains(id))
    }

    /// Whether it requires a flag or sparse component (checked entity by
    /// entity).
    #[inline]
    pub(crate) fn requires_sparse(&self) -> bool {
        !self.required_sparse.is_empty()
    }

    /// The components its parameters write.
    #[inline]
    pub(crate) fn written(&self) -> impl Iterator<Item = ComponentId> + '_ {
        self.columns.columns().written()
    }

    /// Whether `archetypes` (the list it was made for) has no archetype the
    /// plan has not looked at.
    #[inline]
    pub(crate) fn is_current(&self, archetypes: &Archetypes) -> bool {
        self.seen == archetypes.len()
    }

    /// The plan, placed in every archetype of `archetypes`.
    pub(crate) fn placed(mut self, archetypes: &Archetypes) -> Self {
        if !self.is_current(archetypes) {
            self.sync(archetypes);
        }
        self
    }

    /// Looks at the archetypes created since the last call.
    fn sync(&mut self, archetypes: &Archetypes) {
        for archetype in archetypes.since(self.seen) {
            if self.required.iter().all(|&id| archetype.set().contains(id)) {
                self.columns.place(archetypes, archetype.id());
            }
        }
        self.seen = archetypes.len();
    }
}

/// The plans of the query types run on one context, by query type.
#[derive(Default)]
pub(crate) struct QueryPlans {
    by_type: HashMap<TypeId, QueryPlan, BuildHasherDefault<TypeIdHasher>>,
}

impl QueryPlans {
    /// `Q`'s plan, made on first use and brought up to date with
    /// `archetypes`; [`Error::QueryAliasing`] as [`QueryPlan::of`].
    #[inline]
    pub(crate) fn current<Q: QueryParam>(
        &mut self,
        archetypes: &Archetypes,
        context: &'static str,
    ) -> Result<&QueryPlan, Error> {
        let plan = match self.by_type.entry(TypeId::of::<Q::Key>()) {
            Entry::Occupied(plan) => plan.into_mut(),
            Entry::Vacant(slot) => slot.insert(QueryPlan::of::<Q>(context)?),
        };
        if !plan.is_current(archetypes) {
            plan.sync(archetypes);
        }
        Ok(plan)
    }

    /// The plans of `Q` and `R`, each as [`current`](Self::current) gives
    /// it.
    pub(crate) fn current_pair<Q: QueryParam, R: QueryParam>(
        &mut self,
        archetypes: &Archetypes,
        context: &'static str,
    ) -> Result<(&QueryPlan, &QueryPlan), Error> {
        self.current::<R>(archetypes, context)?;
        self.current::<Q>(archetypes, context)?;
        let made = |key| {
            self.by_type
                .get(&key)
                .expect("both plans were made (or brought up to date) just above")
        };
        Ok((made(TypeId::of::<Q::Key>()), made(TypeId::of::<R::Key>())))
    }

    /// `Q`'s plan, if one was made (it may be out of date: a query's walk
    /// then finds its archetypes itself).
    #[inline]
    pub(crate) fn get<Q: QueryParam>(&self) -> Option<&QueryPlan> {
        self.by_type.get(&TypeId::of::<Q::Key>())
    }
}
