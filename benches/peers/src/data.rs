//! The component types every column stores. One Rust type per role, with each
//! crate's trait implemented on it as that crate's documentation recommends
//! for the role: plain data in tables or vectors, sparse storage for what comes
//! and goes, change tracking turned on only where a workload reacts to change.
//!
//! | role | bevy_ecs | shipyard | specs | reactecs |
//! |---|---|---|---|---|
//! | plain data | table | untracked | `VecStorage` | archetype column |
//! | `AddB` (added and removed) | `SparseSet` | untracked | `VecStorage` | `sparse` |
//! | `ArchB` (the same, kept in archetypes) | | | | archetype column |
//! | `Pos` (watched for change) | table (ticks always on) | `#[track(Modification)]` | `FlaggedStorage<VecStorage>` | archetype column |
//! | `Tag` (watched tag) | `SparseSet` | `#[track(Insertion, Removal)]` | `FlaggedStorage<NullStorage>` | archetype column |
//! | `FlagTag` (the same tag) | | | | `flag` |
//!
//! hecs has no per-type settings: every type is an archetype column.

use bevy_ecs::component::Component as BevyComponent;
use shipyard::Component as ShipyardComponent;
use specs::{FlaggedStorage, NullStorage, VecStorage};

/// A row-major 4x4 matrix.
pub type Mat4 = [[f32; 4]; 4];

/// Declares plain-data components: bevy table storage, shipyard untracked,
/// specs `VecStorage`, reactecs archetype columns.
macro_rules! plain {
    ($($(#[$doc:meta])* $name:ident($ty:ty);)+) => {
        $(
            $(#[$doc])*
            #[derive(Clone, Copy, Debug, PartialEq, BevyComponent, ShipyardComponent)]
            pub struct $name(pub $ty);

            impl specs::Component for $name {
                type Storage = VecStorage<Self>;
            }
        )+
        reactecs::component!($($name),+);
    };
}

plain! {
    /// ecs_bench_suite's `Transform`: a 4x4 matrix.
    Transform(Mat4);
    /// 3 x f32.
    Position([f32; 3]);
    /// 3 x f32.
    Rotation([f32; 3]);
    /// 3 x f32.
    Velocity([f32; 3]);
    /// fragmented_iter's payload.
    Data(f32);
    /// fragmented_iter's kinds, one archetype each.
    A(f32);
    /// A kind.
    B(f32);
    /// A kind.
    C(f32);
    /// A kind.
    D(f32);
    /// A kind.
    E(f32);
    /// A kind.
    F(f32);
    /// A kind.
    G(f32);
    /// A kind.
    H(f32);
    /// A kind.
    I(f32);
    /// A kind.
    J(f32);
    /// A kind.
    K(f32);
    /// A kind.
    L(f32);
    /// A kind.
    M(f32);
    /// A kind.
    N(f32);
    /// A kind.
    O(f32);
    /// A kind.
    P(f32);
    /// A kind.
    Q(f32);
    /// A kind.
    R(f32);
    /// A kind.
    S(f32);
    /// A kind.
    T(f32);
    /// A kind.
    U(f32);
    /// A kind.
    V(f32);
    /// A kind.
    W(f32);
    /// A kind.
    X(f32);
    /// A kind.
    Y(f32);
    /// A kind.
    Z(f32);
    /// add_remove: what every entity has.
    AddA(f32);
    /// add_remove, reactecs' archetype column: the component that comes and goes, kept in archetypes.
    ArchB(f32);
    /// reactive workloads: velocity (read, never watched).
    Vel([f32; 3]);
    /// reactive_add_remove: what every entity holds, summed by the consumers.
    Held(u64);
    /// index_lookup: the primary key.
    Id(u64);
    /// index_lookup: the value read per key.
    Value(f32);
}

/// add_remove: the component that comes and goes. bevy: `SparseSet`
/// storage (its documentation's advice for components added and removed
/// often); reactecs: `sparse`.
#[derive(Clone, Copy, Debug, PartialEq, BevyComponent, ShipyardComponent)]
#[component(storage = "SparseSet")]
pub struct AddB(pub f32);

impl specs::Component for AddB {
    type Storage = VecStorage<Self>;
}

/// Reactive workloads: the position consumers react to.
#[derive(Clone, Copy, Debug, PartialEq, BevyComponent, ShipyardComponent)]
#[track(Modification)]
pub struct Pos(pub [f32; 3]);

impl specs::Component for Pos {
    type Storage = FlaggedStorage<Self, VecStorage<Self>>;
}

/// reactive_add_remove: the tag added and removed, watched by two consumers.
#[derive(Clone, Copy, Debug, Default, PartialEq, BevyComponent, ShipyardComponent)]
#[component(storage = "SparseSet")]
#[track(Insertion, Removal)]
pub struct Tag;

impl specs::Component for Tag {
    type Storage = FlaggedStorage<Self, NullStorage<Self>>;
}

/// reactive_add_remove, reactecs' flag column: the same tag declared `flag`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FlagTag;

reactecs::component!(sparse AddB, Pos, Tag, flag FlagTag);

/// boids, bevy's twin of the example's simulation (`examples/boids`): the
/// example's components as bevy components (table storage, plain data), its
/// clock and census as resources. reactecs' column and the baseline run the
/// example's own code and types.
pub mod boid {
    use bevy_ecs::prelude::{Component, Resource};

    use crate::flock::{self, Vec2};

    /// Where the boid is.
    #[derive(Clone, Copy, Debug, PartialEq, Component)]
    pub struct Pos(pub Vec2);
    /// How fast it flies.
    #[derive(Clone, Copy, Debug, PartialEq, Component)]
    pub struct Vel(pub Vec2);
    /// Its steering this frame (written by Steer, read by Integrate).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Component)]
    pub struct Accel(pub Vec2);
    /// The grid cell it is in: what the grid files it under.
    #[derive(Clone, Copy, Debug, PartialEq, Component)]
    pub struct GridCell(pub flock::Cell);
    /// The frame it was born.
    #[derive(Clone, Copy, Debug, PartialEq, Component)]
    pub struct Born(pub u32);
    /// Which boid it is: kept through every rebirth.
    #[derive(Clone, Copy, Debug, PartialEq, Component)]
    pub struct Serial(pub u32);
    /// The frame being simulated.
    #[derive(Clone, Copy, Debug, PartialEq, Resource)]
    pub struct Clock(pub u32);
    /// What Counting counted on the last frame.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Resource)]
    pub struct Census {
        /// Boids alive.
        pub boids: usize,
        /// Their mean speed.
        pub mean_speed: f32,
        /// Boids born on the frame before.
        pub births: usize,
    }
}
