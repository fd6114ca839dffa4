//! What the workloads compute, shared by every column, and the models that
//! predict their results exactly so each column's work can be checked.

use crate::by_hand::ByHand;
use crate::data::{Mat4, Position, Rotation, Transform, Velocity};
use crate::flock::Vec2;
use crate::params::Params;

/// A small deterministic generator (SplitMix64), so every column sees the
/// same keys and the same change sets.
pub struct SplitMix(pub u64);

impl SplitMix {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `bound`.
    pub fn below(&mut self, bound: usize) -> usize {
        (self.next_u64() % bound as u64) as usize
    }
}

/// The identity matrix.
pub const IDENTITY: Mat4 = [
    [1.0, 0.0, 0.0, 0.0],
    [0.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 1.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
];

/// The x unit vector.
pub const UNIT_X: [f32; 3] = [1.0, 0.0, 0.0];

// ---------------------------------------------------------------- simple_insert

/// The components of simple_insert's entity `i` (ecs_bench_suite's, with the
/// position's x set to `i` so the check can tell the rows apart).
pub fn insert_bundle(i: usize) -> (Transform, Position, Rotation, Velocity) {
    (
        Transform(IDENTITY),
        Position([i as f32, 0.0, 0.0]),
        Rotation(UNIT_X),
        Velocity(UNIT_X),
    )
}

/// Checks a world built by simple_insert: `count` entities, and the sum of
/// their positions' x.
pub fn check_insert(p: &Params, count: usize, sum_x: f64) -> Result<(), String> {
    let n = p.insert_entities;
    let expected = (n * (n - 1) / 2) as f64;
    if count != n || sum_x != expected {
        return Err(format!(
            "expected {n} entities with x summing to {expected}, found {count} summing to {sum_x}"
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------- simple_iter

/// simple_iter's step.
#[inline(always)]
pub fn advance(position: &mut [f32; 3], velocity: &[f32; 3]) {
    position[0] += velocity[0];
    position[1] += velocity[1];
    position[2] += velocity[2];
}

/// simple_iter's entity `i`: ecs_bench_suite's four components, all at x = 1.
pub fn iter_bundle() -> (Transform, Position, Rotation, Velocity) {
    (
        Transform(IDENTITY),
        Position(UNIT_X),
        Rotation(UNIT_X),
        Velocity(UNIT_X),
    )
}

/// Checks simple_iter after `runs` runs, given every entity's position.
pub fn check_iter<'a>(p: &Params, runs: usize, positions: impl Iterator<Item = &'a [f32; 3]>) -> Result<(), String> {
    let x = 1.0 + runs as f32;
    let mut count = 0;
    for pos in positions {
        if *pos != [x, 0.0, 0.0] {
            return Err(format!("after {runs} runs a position is {pos:?}, not [{x}, 0, 0]"));
        }
        count += 1;
    }
    if count != p.iter_entities {
        return Err(format!("{count} positions, expected {}", p.iter_entities));
    }
    Ok(())
}

// ---------------------------------------------------------------- fragmented_iter

/// fragmented_iter's step (ecs_bench_suite's: double Data).
#[inline(always)]
pub fn double(data: &mut f32) {
    *data *= 2.0;
}

/// Counts fragmented_iter's runs since Data was last set back to 1.0.
#[derive(Default)]
pub struct Doubling {
    /// Runs since the last reset.
    pub runs: usize,
}

impl Doubling {
    /// Whether the column must set every Data back to 1.0 before the next
    /// (timed) run; counts that run.
    pub fn before_run(&mut self, p: &Params) -> bool {
        let reset = self.runs == p.fragment_reset_every;
        if reset {
            self.runs = 0;
        }
        self.runs += 1;
        reset
    }

    /// Checks every Data value, and that there are 26 x `fragment_per_kind`.
    pub fn check(&self, p: &Params, values: impl Iterator<Item = f32>) -> Result<(), String> {
        let expected = 2f32.powi(self.runs as i32);
        let mut count = 0;
        for value in values {
            if value != expected {
                return Err(format!("after {} runs a Data is {value}, not {expected}", self.runs));
            }
            count += 1;
        }
        if count != 26 * p.fragment_per_kind {
            return Err(format!("{count} Data, expected {}", 26 * p.fragment_per_kind));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------- heavy_compute

/// `m` rotated about x by `angle` radians (row-major).
pub fn rotation_x(angle: f32) -> Mat4 {
    let (s, c) = angle.sin_cos();
    [
        [1.0, 0.0, 0.0, 0.0],
        [0.0, c, -s, 0.0],
        [0.0, s, c, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ]
}

/// The inverse of `m` by cofactors, or `None` if singular.
#[inline]
pub fn invert(m: &Mat4) -> Option<Mat4> {
    let [
        [a00, a01, a02, a03],
        [a10, a11, a12, a13],
        [a20, a21, a22, a23],
        [a30, a31, a32, a33],
    ] = *m;
    let s0 = a00 * a11 - a10 * a01;
    let s1 = a00 * a12 - a10 * a02;
    let s2 = a00 * a13 - a10 * a03;
    let s3 = a01 * a12 - a11 * a02;
    let s4 = a01 * a13 - a11 * a03;
    let s5 = a02 * a13 - a12 * a03;
    let c5 = a22 * a33 - a32 * a23;
    let c4 = a21 * a33 - a31 * a23;
    let c3 = a21 * a32 - a31 * a22;
    let c2 = a20 * a33 - a30 * a23;
    let c1 = a20 * a32 - a30 * a22;
    let c0 = a20 * a31 - a30 * a21;
    let det = s0 * c5 - s1 * c4 + s2 * c3 + s3 * c2 - s4 * c1 + s5 * c0;
    if det == 0.0 {
        return None;
    }
    let d = 1.0 / det;
    Some([
        [
            (a11 * c5 - a12 * c4 + a13 * c3) * d,
            (-a01 * c5 + a02 * c4 - a03 * c3) * d,
            (a31 * s5 - a32 * s4 + a33 * s3) * d,
            (-a21 * s5 + a22 * s4 - a23 * s3) * d,
        ],
        [
            (-a10 * c5 + a12 * c2 - a13 * c1) * d,
            (a00 * c5 - a02 * c2 + a03 * c1) * d,
            (-a30 * s5 + a32 * s2 - a33 * s1) * d,
            (a20 * s5 - a22 * s2 + a23 * s1) * d,
        ],
        [
            (a10 * c4 - a11 * c2 + a13 * c0) * d,
            (-a00 * c4 + a01 * c2 - a03 * c0) * d,
            (a30 * s4 - a31 * s2 + a33 * s0) * d,
            (-a20 * s4 + a21 * s2 - a23 * s0) * d,
        ],
        [
            (-a10 * c3 + a11 * c1 - a12 * c0) * d,
            (a00 * c3 - a01 * c1 + a02 * c0) * d,
            (-a30 * s3 + a31 * s1 - a32 * s0) * d,
            (a20 * s3 - a21 * s1 + a22 * s0) * d,
        ],
    ])
}

/// heavy_compute's work for one entity: invert the matrix `inversions`
/// times, then transform the position by it. Out of line, so that every
/// column runs the very same machine code (inlined, the compiler vectorises
/// it differently per call site, which would measure code generation, not
/// the ECS).
#[inline(never)]
pub fn heavy(transform: &mut Mat4, position: &mut [f32; 3], inversions: usize) {
    for _ in 0..inversions {
        *transform = invert(transform).expect("a rotation is invertible");
    }
    let m = &*transform;
    let v = *position;
    *position = std::array::from_fn(|i| m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2]);
}

/// heavy_compute's entity: ecs_bench_suite's rotation about x by 1.2 rad and
/// unit vectors.
pub fn heavy_bundle() -> (Transform, Position, Rotation, Velocity) {
    (
        Transform(rotation_x(1.2)),
        Position(UNIT_X),
        Rotation(UNIT_X),
        Velocity(UNIT_X),
    )
}

/// Checks heavy_compute after `runs` runs, given every entity's matrix and
/// position: each must equal, bit for bit, one row run `runs` times.
pub fn check_heavy<'a>(
    p: &Params,
    runs: usize,
    rows: impl Iterator<Item = (&'a Mat4, &'a [f32; 3])>,
) -> Result<(), String> {
    let (mut m, mut v) = (rotation_x(1.2), UNIT_X);
    for _ in 0..runs {
        heavy(&mut m, &mut v, p.heavy_inversions);
    }
    let mut count = 0;
    for (row_m, row_v) in rows {
        if *row_m != m || *row_v != v {
            return Err(format!(
                "after {runs} runs an entity holds {row_m:?}, {row_v:?}, not {m:?}, {v:?}"
            ));
        }
        count += 1;
    }
    if count != p.heavy_entities {
        return Err(format!("{count} entities, expected {}", p.heavy_entities));
    }
    Ok(())
}

// ---------------------------------------------------------------- add_remove

/// add_remove: the B given to entity `i` (and taken back, summed).
pub fn add_remove_b(i: usize) -> f32 {
    i as f32
}

/// Checks add_remove after `runs` runs: the B values taken back sum to what
/// was given, and the entities' A values (read after the runs) are intact.
pub fn check_add_remove(
    p: &Params,
    runs: usize,
    taken_sum: f64,
    a_values: impl Iterator<Item = f32>,
    b_left: usize,
) -> Result<(), String> {
    let n = p.add_remove_entities;
    let per_run = (n * (n - 1) / 2) as f64;
    if taken_sum != per_run * runs as f64 {
        return Err(format!(
            "after {runs} runs the B values taken back sum to {taken_sum}, not {}",
            per_run * runs as f64
        ));
    }
    let (mut count, mut sum) = (0, 0.0);
    for a in a_values {
        count += 1;
        sum += f64::from(a);
    }
    if count != n || sum != per_run || b_left != 0 {
        return Err(format!(
            "{count} A summing to {sum} with {b_left} B left; expected {n} summing to {per_run}, none left"
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------- reactive_replace

/// Reactive workloads: entity `i`'s starting position.
pub fn start_position(i: usize) -> [f32; 3] {
    [(i % 100) as f32, 0.0, 0.0]
}

/// Reactive workloads: every entity's velocity.
pub const VELOCITY: [f32; 3] = [1.0, 0.5, 0.0];

/// The reactive step: `p + v`.
#[inline(always)]
pub fn moved(p: &[f32; 3], v: &[f32; 3]) -> [f32; 3] {
    [p[0] + v[0], p[1] + v[1], p[2] + v[2]]
}

/// What a reactive consumer has seen: how many entities, and the sum of
/// the x (or the held value) of each.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Seen {
    /// Entities visited.
    pub count: usize,
    /// The sum of what was read from each.
    pub sum: f64,
}

impl Seen {
    /// Notes one visited entity whose value is `value`.
    #[inline(always)]
    pub fn visit(&mut self, value: f64) {
        self.count += 1;
        self.sum += value;
    }
}

fn compare(what: &str, frames: usize, seen: Seen, expected: Seen) -> Result<(), String> {
    if seen != expected {
        return Err(format!(
            "after {frames} frames the {what} consumer saw {} entities summing to {}, expected {} summing to {}",
            seen.count, seen.sum, expected.count, expected.sum
        ));
    }
    Ok(())
}

/// Checks reactive_replace after `frames` frames: what the consumer saw,
/// and the sum of x over the world's positions.
pub fn check_replace(p: &Params, frames: usize, seen: Seen, world_sum_x: f64) -> Result<(), String> {
    let n = p.replace_entities;
    let start: f64 = (0..n).map(|i| f64::from(start_position(i)[0])).sum();
    let mut expected = Seen::default();
    for frame in 1..=frames {
        expected.count += n;
        expected.sum += start + (n * frame) as f64;
    }
    compare("change", frames, seen, expected)?;
    let world = start + (n * frames) as f64;
    if world_sum_x != world {
        return Err(format!("positions' x sum to {world_sum_x}, expected {world}"));
    }
    Ok(())
}

// ---------------------------------------------------------------- reactive_replace_sparse

/// reactive_replace_sparse's change sets: a fixed random permutation of the
/// entities, cut into frames of `sparse_changed`.
pub struct SparsePlan {
    order: Vec<u32>,
    per_frame: usize,
}

impl SparsePlan {
    /// The permutation for `p`.
    pub fn new(p: &Params) -> Self {
        let mut order: Vec<u32> = (0..p.sparse_entities as u32).collect();
        let mut rng = SplitMix(0x5EED_0001);
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        SparsePlan {
            order,
            per_frame: p.sparse_changed,
        }
    }

    /// The entities (by creation order) changed in frame `frame` (from 0).
    pub fn frame(&self, frame: usize) -> &[u32] {
        let chunks = self.order.len() / self.per_frame;
        let at = (frame % chunks) * self.per_frame;
        &self.order[at..at + self.per_frame]
    }

    /// Checks reactive_replace_sparse after `frames` frames: what the
    /// consumer saw (replayed on a plain model), and the world's x sum.
    pub fn check(&self, p: &Params, frames: usize, seen: Seen, world_sum_x: f64) -> Result<(), String> {
        let n = p.sparse_entities;
        let mut x: Vec<f32> = (0..n).map(|i| start_position(i)[0]).collect();
        let mut expected = Seen::default();
        for frame in 0..frames {
            for &i in self.frame(frame) {
                x[i as usize] += VELOCITY[0];
                expected.visit(f64::from(x[i as usize]));
            }
        }
        compare("change", frames, seen, expected)?;
        let world: f64 = x.iter().map(|&v| f64::from(v)).sum();
        if world_sum_x != world {
            return Err(format!("positions' x sum to {world_sum_x}, expected {world}"));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------- reactive_add_remove

/// Checks reactive_add_remove after `frames` frames: the consumer of
/// entities that gained the tag and the consumer of those that lost it each
/// visited every other entity once per frame, summing their held values
/// (entity `i` holds `i`); and no entity keeps the tag.
pub fn check_tags(p: &Params, frames: usize, joined: Seen, left: Seen, still_tagged: usize) -> Result<(), String> {
    let evens = (0..p.tag_entities).step_by(2);
    let per_frame = Seen {
        count: evens.len(),
        sum: evens.map(|i| i as f64).sum(),
    };
    let expected = Seen {
        count: per_frame.count * frames,
        sum: per_frame.sum * frames as f64,
    };
    compare("joined", frames, joined, expected)?;
    compare("left", frames, left, expected)?;
    if still_tagged != 0 {
        return Err(format!("{still_tagged} entities still tagged"));
    }
    Ok(())
}

// ---------------------------------------------------------------- index_lookup

/// index_lookup's keys: one distinct random key per entity, and the
/// positions (into `keys`) of the keys looked up.
pub struct Keys {
    /// Entity `i`'s key.
    pub keys: Vec<u64>,
    /// The keys looked up per run, in order.
    pub lookups: Vec<u64>,
    /// The sum of the values read per run.
    pub expected: f64,
}

/// index_lookup: entity `i`'s value.
pub fn index_value(i: usize) -> f32 {
    (i % 1000) as f32 * 0.5
}

impl Keys {
    /// The keys for `p`.
    pub fn new(p: &Params) -> Self {
        let mut rng = SplitMix(0x5EED);
        let keys: Vec<u64> = (0..p.index_entities).map(|_| rng.next_u64()).collect();
        let distinct: std::collections::HashSet<u64> = keys.iter().copied().collect();
        assert_eq!(distinct.len(), keys.len(), "keys are distinct");
        let picks: Vec<usize> = (0..p.index_lookups).map(|_| rng.below(keys.len())).collect();
        Keys {
            lookups: picks.iter().map(|&i| keys[i]).collect(),
            expected: picks.iter().map(|&i| f64::from(index_value(i))).sum(),
            keys,
        }
    }

    /// Checks the sums of `runs` runs.
    pub fn check(&self, runs: usize, total: f64) -> Result<(), String> {
        let expected = self.expected * runs as f64;
        if total != expected {
            return Err(format!(
                "after {runs} runs the values read sum to {total}, expected {expected}"
            ));
        }
        Ok(())
    }
}

/// The hash map the non-reactecs columns keep beside the world, keyed as
/// reactecs' primary index is (foldhash).
pub type KeyMap<V> = std::collections::HashMap<u64, V, foldhash::fast::RandomState>;

// ---------------------------------------------------------------- boids

/// boids: the frames a flock flies from the start before it is started
/// again (untimed, in `prepare`, with its first frame), so that every check
/// compares at most this many frames. Boids are chaotic: where two runs add
/// up a sum over neighbours in another order, their last-bit differences
/// grow until a neighbour is seen by one run and not by the other (from
/// about frame 18 at 100,000 boids, a few boids out of tolerance, most of
/// them by frame 200). The example's `same_frames` checks five frames; the
/// time a frame takes stays the same from the first frames on.
pub const BOID_FRAMES: usize = 5;

/// boids: how far a column's positions and velocities may be from the
/// model's after the first frame: the tolerance of the example's
/// `same_frames` (the grids list a cell's boids in other orders, so sums
/// over neighbours are added up in another order).
pub const BOID_TOLERANCE: f32 = 1e-3;

/// boids' model: the example's hand-written flock (`by_hand.rs`: flat
/// arrays, no ECS), from the same start as every column, run as many frames
/// as the column under check ran (it is kept between checks, and started
/// again when a column has run fewer frames than it).
pub struct BoidsModel {
    boids: usize,
    flock: ByHand,
    frames: usize,
}

impl BoidsModel {
    /// The model for `p`, at the start.
    pub fn new(p: &Params) -> Self {
        BoidsModel {
            boids: p.boids,
            flock: ByHand::new(p.boids),
            frames: 0,
        }
    }

    /// Checks a column's `state` (every boid as `(serial, position,
    /// velocity)`, by serial, as the example's `Flock::state` gives it) after
    /// `frames` frames: every serial once,
    /// and each boid where the model has it after as many frames: exactly
    /// after the first frame (every column visits the neighbours in the same
    /// order then), within [`BOID_TOLERANCE`] after later ones.
    pub fn check(&mut self, frames: usize, state: &[(u32, Vec2, Vec2)]) -> Result<(), String> {
        if frames < self.frames {
            *self = BoidsModel {
                boids: self.boids,
                flock: ByHand::new(self.boids),
                frames: 0,
            };
        }
        while self.frames < frames {
            self.flock.frame();
            self.frames += 1;
        }
        let model = self.flock.state();
        if state.len() != model.len() {
            return Err(format!(
                "after {frames} frames {} boids, expected {}",
                state.len(),
                model.len()
            ));
        }
        for (&(s, p, v), &(t, q, w)) in state.iter().zip(&model) {
            if s != t {
                return Err(format!("after {frames} frames boid {t} is missing (found serial {s})"));
            }
            let exact = p == q && v == w;
            if frames <= 1 && !exact {
                return Err(format!(
                    "after {frames} frame boid {s} is at {p:?} flying {v:?}, not exactly at {q:?} flying {w:?}"
                ));
            }
            let diffs = [p.x - q.x, p.y - q.y, v.x - w.x, v.y - w.y].map(f32::abs);
            // A NaN is refused too.
            if diffs.iter().any(|d| d.is_nan() || *d >= BOID_TOLERANCE) {
                return Err(format!(
                    "after {frames} frames boid {s} is at {p:?} flying {v:?}, the model's at {q:?} flying {w:?}"
                ));
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------- memory_1m

/// memory_1m's entity `i`: two 12-byte components.
pub fn memory_bundle(i: usize) -> (Position, Velocity) {
    (Position([i as f32, 0.0, 0.0]), Velocity(UNIT_X))
}

/// Checks a world built by memory_1m: `count` entities whose positions' x
/// sum to `sum_x`.
pub fn check_memory(p: &Params, count: usize, sum_x: f64) -> Result<(), String> {
    let n = p.memory_entities;
    let expected = (n as f64) * (n as f64 - 1.0) / 2.0;
    if count != n || sum_x != expected {
        return Err(format!(
            "expected {n} entities with x summing to {expected}, found {count} summing to {sum_x}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The models refuse results that are off by one entity, one frame or
    /// one value: a column that skips work cannot pass.
    #[test]
    fn models_refuse_near_misses() {
        let p = Params::small();
        let n = p.replace_entities;
        let start: f64 = (0..n).map(|i| f64::from(start_position(i)[0])).sum();
        let one_frame = Seen {
            count: n,
            sum: start + n as f64,
        };
        let world = start + n as f64;
        assert!(check_replace(&p, 1, one_frame, world).is_ok());
        let short = Seen {
            count: n - 1,
            ..one_frame
        };
        assert!(check_replace(&p, 1, short, world).is_err());
        assert!(
            check_replace(&p, 2, one_frame, world).is_err(),
            "a frame the consumer missed"
        );
        assert!(check_replace(&p, 1, one_frame, world + 1.0).is_err());

        let plan = SparsePlan::new(&p);
        let (mut x, mut seen) = (
            (0..p.sparse_entities).map(|i| start_position(i)[0]).collect::<Vec<_>>(),
            Seen::default(),
        );
        for frame in 0..3 {
            for &i in plan.frame(frame) {
                x[i as usize] += VELOCITY[0];
                seen.visit(f64::from(x[i as usize]));
            }
        }
        let sum: f64 = x.iter().map(|&v| f64::from(v)).sum();
        assert!(plan.check(&p, 3, seen, sum).is_ok());
        assert!(plan.check(&p, 4, seen, sum).is_err());
        assert_ne!(plan.frame(0), plan.frame(1), "each frame changes other entities");

        let evens = (0..p.tag_entities).step_by(2);
        let per_frame = Seen {
            count: evens.len(),
            sum: evens.map(|i| i as f64).sum(),
        };
        assert!(check_tags(&p, 1, per_frame, per_frame, 0).is_ok());
        assert!(check_tags(&p, 1, per_frame, Seen::default(), 0).is_err());
        assert!(check_tags(&p, 1, per_frame, per_frame, 1).is_err());

        let mut model = BoidsModel::new(&p);
        let mut flock = ByHand::new(p.boids);
        for _ in 0..2 {
            flock.frame();
        }
        let state = flock.state();
        assert!(model.check(2, &state).is_ok());
        assert!(model.check(1, &state).is_err(), "a frame short");
        let mut nudged = state.clone();
        nudged[7].1.x += 2.0 * BOID_TOLERANCE;
        assert!(model.check(2, &nudged).is_err());
        nudged[7].1.x = f32::NAN;
        assert!(model.check(2, &nudged).is_err());
        assert!(model.check(2, &state[1..]).is_err(), "a boid missing");
        let mut doubled = state.clone();
        doubled[1].0 = 0;
        assert!(model.check(2, &doubled).is_err(), "a serial twice");

        let mut doubling = Doubling::default();
        assert!(!doubling.before_run(&p));
        let data = 26 * p.fragment_per_kind;
        assert!(doubling.check(&p, std::iter::repeat_n(2.0, data)).is_ok());
        assert!(doubling.check(&p, std::iter::repeat_n(1.0, data)).is_err());
        assert!(doubling.check(&p, std::iter::repeat_n(2.0, data - 1)).is_err());
    }
}
