//! heavy_compute (ecs_bench_suite): 1,000 entities with a 4x4 matrix
//! (a rotation about X by 1.2 rad), Position, Rotation and Velocity; each
//! iteration, for every entity, inverts its matrix in place 100 times, then
//! transforms its Position by it. The work per entity (~100 inversions)
//! dwarfs any iteration overhead: this measures how well the work spreads
//! over threads.
//!
//! With the `parallel` feature (`cargo bench --all-features`):
//! `reactecs_par` uses `QueryMut::par_for_each` (rayon, chunks as work items)
//! against `baseline_par`, rayon's `par_iter_mut` on a `Vec` of structs.
//! Always: `reactecs_seq` (`QueryMut::for_each`) against `baseline_seq`, the
//! same loop on the `Vec`.

mod common;

use common::*;
use criterion::Criterion;
use reactecs::{Context, Entity};

const N: usize = 1_000;
const INVERSIONS: usize = 100;

type Mat4 = [[f32; 4]; 4];

/// `Matrix4::from_angle_x(Rad(angle))`, row-major (`m[row][col]`).
fn rotation_x(angle: f32) -> Transform {
    let (s, c) = angle.sin_cos();
    Transform([
        [1.0, 0.0, 0.0, 0.0],
        [0.0, c, -s, 0.0],
        [0.0, s, c, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ])
}

/// The inverse of `m` by cofactors (the adjugate over the determinant, from
/// the 2x2 sub-determinants of the top and bottom row pairs), or `None` if
/// `m` is singular.
#[inline]
fn invert(m: &Mat4) -> Option<Mat4> {
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

fn mul(a: &Mat4, b: &Mat4) -> Mat4 {
    std::array::from_fn(|i| std::array::from_fn(|j| (0..4).map(|k| a[i][k] * b[k][j]).sum()))
}

/// `m * (v, 0)`, truncated: cgmath's `transform_vector`.
#[inline]
fn transform_vector(m: &Mat4, v: [f32; 3]) -> [f32; 3] {
    std::array::from_fn(|i| m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2])
}

/// The work of one entity, shared by every variant. Kept out of line so that
/// every variant runs the very same machine code for it: inlined, LLVM
/// vectorised the inversion differently per call site (here the closure
/// inside `QueryMut::for_each` came out ~1.45x slower than the `Vec` loop for
/// identical work), which would have measured code generation, not the ECS.
#[inline(never)]
fn heavy(transform: &mut Transform, position: &mut Position) {
    for _ in 0..INVERSIONS {
        transform.0 = invert(&transform.0).expect("a rotation is invertible");
    }
    position.0 = transform_vector(&transform.0, position.0);
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-4
}

fn close_mat(a: &Mat4, b: &Mat4) -> bool {
    a.iter().flatten().zip(b.iter().flatten()).all(|(&x, &y)| close(x, y))
}

fn baseline_rows(position: impl Fn(usize) -> Position) -> Vec<SuiteRow> {
    (0..N)
        .map(|i| SuiteRow {
            position: position(i),
            ..SuiteRow::new(rotation_x(1.2))
        })
        .collect()
}

/// The context with the rows of [`baseline_rows`], and its entities.
fn spawn(position: impl Fn(usize) -> Position) -> (Context, Vec<Entity>) {
    let mut game = Context::new();
    let entities = game
        .create_entities_with(baseline_rows(position).into_iter().map(SuiteRow::bundle))
        .expect("no duplicate components");
    (game, entities)
}

fn baseline_seq(rows: &mut [SuiteRow]) {
    for row in rows {
        heavy(&mut row.transform, &mut row.position);
    }
}

fn reactecs_seq(game: &mut Context) {
    game.query_mut::<(&mut Position, &mut Transform)>()
        .expect("no aliasing")
        .for_each(|(pos, mat)| heavy(mat, pos));
}

#[cfg(feature = "parallel")]
fn baseline_par(rows: &mut [SuiteRow]) {
    use rayon::prelude::*;
    rows.par_iter_mut()
        .for_each(|row| heavy(&mut row.transform, &mut row.position));
}

#[cfg(feature = "parallel")]
fn reactecs_par(game: &mut Context) {
    game.query_mut::<(&mut Position, &mut Transform)>()
        .expect("no aliasing")
        .par_for_each(|(pos, mat)| heavy(mat, pos));
}

/// A variant: its name suffix, its baseline step, its reactecs step.
type Variant = (&'static str, fn(&mut [SuiteRow]), fn(&mut Context));

/// The variants that this build measures.
fn variants() -> Vec<Variant> {
    #[allow(unused_mut, reason = "only the parallel build adds a variant")]
    let mut variants: Vec<Variant> = vec![("seq", baseline_seq, reactecs_seq)];
    #[cfg(feature = "parallel")]
    variants.push(("par", baseline_par, reactecs_par));
    variants
}

/// Whether `game`'s entities have the data `rows` has, bit for bit.
fn same_as(game: &Context, entities: &[Entity], rows: &[SuiteRow]) -> bool {
    entities.iter().zip(rows).all(|(&e, row)| {
        game.get::<Transform>(e) == Ok(&row.transform)
            && game.get::<Position>(e) == Ok(&row.position)
            && game.get::<Rotation>(e) == Ok(&row.rotation)
            && game.get::<Velocity>(e) == Ok(&row.velocity)
    })
}

fn bench(c: &mut Criterion) {
    // Check the work once outside the timed loop.
    let m = rotation_x(1.2).0;
    let inverse = invert(&m).unwrap();
    assert!(close_mat(&mul(&m, &inverse), &IDENTITY.0));
    assert!(close_mat(&inverse, &rotation_x(-1.2).0));
    let skew: Mat4 = [
        [2.0, 1.0, 0.0, 3.0],
        [0.5, -1.0, 4.0, 0.0],
        [1.0, 0.0, 1.0, -2.0],
        [0.0, 2.0, 1.0, 1.0],
    ];
    assert!(close_mat(&mul(&skew, &invert(&skew).unwrap()), &IDENTITY.0));
    assert!(invert(&[[1.0; 4]; 4]).is_none());
    // With distinct positions, one pass must transform each exactly once (a
    // second pass would rotate it again), and every variant must agree with
    // its baseline bit for bit.
    let start = |i: usize| Position([1.0, i as f32, 2.0]);
    for (name, baseline, reactecs) in variants() {
        let mut rows = baseline_rows(start);
        let (mut game, entities) = spawn(start);
        baseline(&mut rows);
        reactecs(&mut game);
        for (i, row) in rows.iter().enumerate() {
            let expected = transform_vector(&m, start(i).0);
            assert!(
                row.position.0.iter().zip(expected).all(|(&a, b)| close(a, b)),
                "{name}: {:?} != {expected:?}",
                row.position
            );
            assert!(close_mat(&row.transform.0, &m));
        }
        assert!(same_as(&game, &entities, &rows), "{name}: reactecs != baseline");
        game.check_invariants().unwrap();
    }

    // The timed worlds start as in ecs_bench_suite (positions at unit X, which
    // the rotation about X keeps). Each iteration inverts an even number of
    // times, so matrices stay (close to) the rotation and positions at unit X:
    // the last entity's are checked every iteration, all of them at the end.
    let mut rows = baseline_rows(|_| Position(UNIT_X));
    let (mut game, entities) = spawn(|_| Position(UNIT_X));
    let last = entities[N - 1];
    let at_rest =
        |t: &Transform, p: &Position| close_mat(&t.0, &m) && p.0.iter().zip(UNIT_X).all(|(&a, b)| close(a, b));

    let mut group = c.benchmark_group("heavy_compute");
    // One iteration takes milliseconds: 20 samples fit in a few seconds
    // (criterion's default 100 would need at least 5,050 iterations).
    group.sample_size(20);
    for (name, baseline, reactecs) in variants() {
        group.bench_function(format!("baseline_{name}"), |b| {
            b.iter(|| {
                baseline(&mut rows);
                let row = &rows[N - 1];
                assert!(at_rest(&row.transform, &row.position));
            })
        });
        group.bench_function(format!("reactecs_{name}"), |b| {
            b.iter(|| {
                reactecs(&mut game);
                assert!(at_rest(game.get(last).unwrap(), game.get(last).unwrap()));
            })
        });
    }
    group.finish();

    assert!(rows.iter().all(|r| at_rest(&r.transform, &r.position)));
    assert_eq!(game.query::<(&Transform, &Position)>().count(), N);
    assert!(
        game.query::<(&Transform, &Position)>()
            .iter()
            .all(|(t, p)| at_rest(t, p))
    );
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
    for (name, _, _) in variants() {
        report_ratios(
            "heavy_compute",
            &format!("baseline_{name}"),
            &[&format!("reactecs_{name}")],
        );
    }
}
