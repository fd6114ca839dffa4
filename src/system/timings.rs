//! Timings of a feature's children: per-phase statistics over a window of
//! recent runs, a read-only view of a feature's tree, and its table.

use std::fmt;
use std::time::Duration;

/// Statistics of one phase (`execute` or `cleanup`) of one system, as measured
/// by the [`Feature`](super::Feature) that contains it.
///
/// [`last`](Self::last) and [`runs`](Self::runs) cover every run;
/// [`average`](Self::average), [`min`](Self::min) and [`max`](Self::max) cover
/// the most recent runs only, up to the feature's timing window. Every figure
/// is zero before the first run. Samples live in a ring buffer allocated when
/// the system is added (or the window changes), so recording a run never
/// allocates; reading a windowed figure scans the window.
#[derive(Clone)]
pub struct PhaseStats {
    /// Ring buffer of the recent samples; its length is the window.
    samples: Box<[Duration]>,
    /// Where the next sample goes.
    next: usize,
    /// How many entries of `samples` hold a sample (at most the window).
    filled: usize,
    last: Duration,
    runs: u64,
}

impl PhaseStats {
    /// Empty statistics over a window of `window` runs (at least 1).
    pub(crate) fn new(window: usize) -> Self {
        PhaseStats {
            samples: vec![Duration::ZERO; window.max(1)].into_boxed_slice(),
            next: 0,
            filled: 0,
            last: Duration::ZERO,
            runs: 0,
        }
    }

    /// Records one run.
    #[inline]
    pub(crate) fn record(&mut self, elapsed: Duration) {
        self.samples[self.next] = elapsed;
        self.next = if self.next + 1 == self.samples.len() {
            0
        } else {
            self.next + 1
        };
        self.filled = (self.filled + 1).min(self.samples.len());
        self.last = elapsed;
        self.runs += 1;
    }

    /// Forgets every run.
    pub(crate) fn reset(&mut self) {
        self.next = 0;
        self.filled = 0;
        self.last = Duration::ZERO;
        self.runs = 0;
    }

    /// Changes the window to `window` runs (at least 1): reallocates the ring
    /// and forgets the windowed samples; `last` and `runs` are kept.
    pub(crate) fn set_window(&mut self, window: usize) {
        self.samples = vec![Duration::ZERO; window.max(1)].into_boxed_slice();
        self.next = 0;
        self.filled = 0;
    }

    /// The duration of the most recent run.
    pub fn last(&self) -> Duration {
        self.last
    }

    /// The mean duration over the window.
    pub fn average(&self) -> Duration {
        if self.filled == 0 {
            return Duration::ZERO;
        }
        let total: u128 = self.samples().map(|sample| sample.as_nanos()).sum();
        let mean = total / self.filled as u128;
        Duration::from_nanos(u64::try_from(mean).unwrap_or(u64::MAX))
    }

    /// The shortest run in the window.
    pub fn min(&self) -> Duration {
        self.samples().min().unwrap_or(Duration::ZERO)
    }

    /// The longest run in the window.
    pub fn max(&self) -> Duration {
        self.samples().max().unwrap_or(Duration::ZERO)
    }

    /// How many runs were recorded in all (not limited to the window).
    pub fn runs(&self) -> u64 {
        self.runs
    }

    /// The window: how many recent runs `average`, `min` and `max` cover.
    pub fn window(&self) -> usize {
        self.samples.len()
    }

    /// The samples in the window, oldest first (at most [`window`](Self::window)).
    pub fn samples(&self) -> impl DoubleEndedIterator<Item = Duration> + '_ {
        // Until the ring wraps, the samples are `..filled` in order; after,
        // the oldest is where the next one goes.
        let (older, newer) = if self.filled < self.samples.len() {
            (&self.samples[..self.filled], &[][..])
        } else {
            let (newer, older) = self.samples.split_at(self.next);
            (older, newer)
        };
        older.iter().chain(newer).copied()
    }
}

impl fmt::Debug for PhaseStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PhaseStats")
            .field("last", &self.last)
            .field("average", &self.average())
            .field("min", &self.min())
            .field("max", &self.max())
            .field("runs", &self.runs)
            .field("window", &self.window())
            .finish()
    }
}

/// A feature's children, whatever its world type: what [`Timings`] reads.
pub(crate) trait TimedChildren {
    /// How many children there are.
    fn count(&self) -> usize;
    /// The child at `index` (`index < count()`).
    fn child(&self, index: usize) -> SystemTimings<'_>;
}

/// A read-only view of the timings of one [`Feature`](super::Feature): one
/// entry per child, in the order they run; a child that is itself a feature
/// brings its own timings along (a tree).
///
/// `Display` prints the tree as a table, one line per system: the feature's
/// name and the column titles first, then each child indented by two spaces
/// per level of nesting, with the `execute` figures (`last`, `avg`, `min`,
/// `max`; `-` for a system that has not run), each in the unit that fits it
/// (`ns`, `us`, `ms` or `s`, three significant digits). A `cleanup`
/// column (the average `cleanup` time) follows when any system in the tree
/// has had its `cleanup` timed. A nested feature's own line shows the time its
/// parent measured for it as a whole. The header says `(timing off)` when the
/// feature does not measure.
///
/// ```text
/// Game            last      avg      min      max  cleanup
///   Move       12.3 us  11.0 us  9.80 us  20.1 us   420 ns
///   Physics    4.56 ms  3.02 ms  2.80 ms  4.56 ms  1.20 us
///     Collide  4.50 ms  2.98 ms  2.76 ms  4.50 ms   850 ns
/// ```
#[derive(Clone, Copy)]
pub struct Timings<'a> {
    pub(crate) name: &'a str,
    pub(crate) timing: bool,
    pub(crate) window: usize,
    pub(crate) children: &'a dyn TimedChildren,
}

impl<'a> Timings<'a> {
    /// The feature's name.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// Whether the feature measures its children.
    pub fn is_timing(&self) -> bool {
        self.timing
    }

    /// How many recent runs the windowed figures cover.
    pub fn window(&self) -> usize {
        self.window
    }

    /// The number of children.
    pub fn len(&self) -> usize {
        self.children.count()
    }

    /// Whether the feature has no children.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each child's timings, in the order the children run.
    pub fn iter(&self) -> TimingsIter<'a> {
        TimingsIter {
            children: self.children,
            next: 0,
            end: self.children.count(),
        }
    }

    /// The timings of the first child named `name`, if any (direct children
    /// only; call [`SystemTimings::feature`] to look deeper).
    pub fn get(&self, name: &str) -> Option<SystemTimings<'a>> {
        self.iter().find(|child| child.name() == name)
    }
}

impl<'a> IntoIterator for Timings<'a> {
    type Item = SystemTimings<'a>;
    type IntoIter = TimingsIter<'a>;

    fn into_iter(self) -> TimingsIter<'a> {
        self.iter()
    }
}

impl fmt::Debug for Timings<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Timings")
            .field("name", &self.name)
            .field("timing", &self.timing)
            .field("window", &self.window)
            .field("systems", &self.iter())
            .finish()
    }
}

/// The timings of one child of a feature.
#[derive(Clone, Copy, Debug)]
pub struct SystemTimings<'a> {
    pub(crate) name: &'a str,
    pub(crate) execute: &'a PhaseStats,
    pub(crate) cleanup: &'a PhaseStats,
    pub(crate) feature: Option<Timings<'a>>,
}

impl<'a> SystemTimings<'a> {
    /// The child's [`name`](super::System::name).
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// The child's `execute` statistics.
    pub fn execute(&self) -> &'a PhaseStats {
        self.execute
    }

    /// The child's `cleanup` statistics.
    pub fn cleanup(&self) -> &'a PhaseStats {
        self.cleanup
    }

    /// The child's own timings, when it is a feature.
    pub fn feature(&self) -> Option<Timings<'a>> {
        self.feature
    }
}

/// The children of a [`Timings`] view, in the order they run.
#[derive(Clone)]
pub struct TimingsIter<'a> {
    children: &'a dyn TimedChildren,
    next: usize,
    end: usize,
}

impl<'a> Iterator for TimingsIter<'a> {
    type Item = SystemTimings<'a>;

    fn next(&mut self) -> Option<SystemTimings<'a>> {
        if self.next == self.end {
            return None;
        }
        self.next += 1;
        Some(self.children.child(self.next - 1))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.end - self.next;
        (left, Some(left))
    }
}

impl DoubleEndedIterator for TimingsIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.next == self.end {
            return None;
        }
        self.end -= 1;
        Some(self.children.child(self.end))
    }
}

impl ExactSizeIterator for TimingsIter<'_> {}

impl fmt::Debug for TimingsIter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

/// One line of the table: the indented name and the figures.
struct Row {
    label: String,
    execute: [String; 4],
    cleanup: String,
}

fn figure(stats: &PhaseStats, figure: fn(&PhaseStats) -> Duration) -> String {
    if stats.runs() == 0 {
        "-".to_owned()
    } else {
        human(figure(stats))
    }
}

/// `duration` in the unit that fits it, with three significant digits:
/// `850 ns`, `12.3 us`, `4.56 ms`, `1.20 s ` (the unit padded to two
/// characters, so right-aligned figures line up).
fn human(duration: Duration) -> String {
    let nanos = duration.as_nanos();
    // Thresholds a little under 1000, so a value that rounds to 1000 in one
    // unit prints as 1.00 in the next.
    let (value, unit) = if nanos < 1_000 {
        return format!("{nanos} ns");
    } else if nanos < 999_500 {
        (nanos as f64 / 1e3, "us")
    } else if nanos < 999_500_000 {
        (nanos as f64 / 1e6, "ms")
    } else {
        (nanos as f64 / 1e9, "s ")
    };
    let decimals = if value < 9.995 {
        2
    } else if value < 99.95 {
        1
    } else {
        0
    };
    format!("{value:.decimals$} {unit}")
}

/// Appends a row per child of `timings` (and of nested features), returning
/// whether any of them had its cleanup timed.
fn collect_rows(timings: Timings<'_>, depth: usize, rows: &mut Vec<Row>) -> bool {
    let mut any_cleanup = false;
    for child in timings.iter() {
        let (execute, cleanup) = (child.execute(), child.cleanup());
        any_cleanup |= cleanup.runs() > 0;
        rows.push(Row {
            label: format!("{:indent$}{}", "", child.name(), indent = 2 * depth),
            execute: [
                figure(execute, PhaseStats::last),
                figure(execute, PhaseStats::average),
                figure(execute, PhaseStats::min),
                figure(execute, PhaseStats::max),
            ],
            cleanup: figure(cleanup, PhaseStats::average),
        });
        if let Some(nested) = child.feature() {
            any_cleanup |= collect_rows(nested, depth + 1, rows);
        }
    }
    any_cleanup
}

impl fmt::Display for Timings<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let title = if self.timing {
            self.name.to_owned()
        } else {
            format!("{} (timing off)", self.name)
        };
        let mut rows = vec![Row {
            label: title,
            execute: ["last", "avg", "min", "max"].map(str::to_owned),
            cleanup: "cleanup".to_owned(),
        }];
        let show_cleanup = collect_rows(*self, 1, &mut rows);

        let width = |cell: fn(&Row) -> &str| rows.iter().map(|row| cell(row).chars().count()).max().unwrap_or(0);
        let label_width = width(|row| &row.label);
        let execute_widths = [
            width(|row| &row.execute[0]),
            width(|row| &row.execute[1]),
            width(|row| &row.execute[2]),
            width(|row| &row.execute[3]),
        ];
        let cleanup_width = width(|row| &row.cleanup);

        for (line, row) in rows.iter().enumerate() {
            if line > 0 {
                writeln!(f)?;
            }
            write!(f, "{:<label_width$}", row.label)?;
            for (figure, width) in row.execute.iter().zip(execute_widths) {
                write!(f, "  {figure:>width$}")?;
            }
            if show_cleanup {
                write!(f, "  {:>cleanup_width$}", row.cleanup)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn stats_are_zero_before_the_first_run() {
        let stats = PhaseStats::new(3);
        assert_eq!(
            (stats.last(), stats.average(), stats.min(), stats.max(), stats.runs()),
            (Duration::ZERO, Duration::ZERO, Duration::ZERO, Duration::ZERO, 0)
        );
        assert_eq!(stats.samples().count(), 0);
    }

    #[test]
    fn the_window_keeps_the_most_recent_samples_oldest_first() {
        let mut stats = PhaseStats::new(3);
        stats.record(ms(10));
        stats.record(ms(2));
        assert_eq!(stats.samples().collect::<Vec<_>>(), [ms(10), ms(2)]);
        assert_eq!((stats.min(), stats.max(), stats.average()), (ms(2), ms(10), ms(6)));

        stats.record(ms(3));
        stats.record(ms(4));
        stats.record(ms(5));
        assert_eq!(stats.samples().collect::<Vec<_>>(), [ms(3), ms(4), ms(5)]);
        assert_eq!(stats.samples().rev().collect::<Vec<_>>(), [ms(5), ms(4), ms(3)]);
        assert_eq!(stats.samples().count(), 3);
        // The slow first run has left the window; `runs` and `last` cover everything.
        assert_eq!((stats.min(), stats.max(), stats.average()), (ms(3), ms(5), ms(4)));
        assert_eq!((stats.last(), stats.runs()), (ms(5), 5));
    }

    #[test]
    fn a_window_of_one_holds_the_last_run() {
        let mut stats = PhaseStats::new(0);
        assert_eq!(stats.window(), 1);
        stats.record(ms(7));
        stats.record(ms(1));
        assert_eq!(stats.samples().collect::<Vec<_>>(), [ms(1)]);
        assert_eq!(
            (stats.min(), stats.max(), stats.average(), stats.last()),
            (ms(1), ms(1), ms(1), ms(1))
        );
    }

    #[test]
    fn changing_the_window_forgets_the_samples_but_not_the_runs() {
        let mut stats = PhaseStats::new(2);
        stats.record(ms(4));
        stats.set_window(5);
        assert_eq!(
            (stats.window(), stats.samples().count(), stats.runs(), stats.last()),
            (5, 0, 1, ms(4))
        );
        stats.record(ms(6));
        assert_eq!((stats.min(), stats.max()), (ms(6), ms(6)));
        stats.reset();
        assert_eq!(
            (stats.samples().count(), stats.runs(), stats.last()),
            (0, 0, Duration::ZERO)
        );
    }

    #[test]
    fn durations_print_in_the_unit_that_fits_with_three_significant_digits() {
        let printed = |nanos: u64| human(Duration::from_nanos(nanos));
        assert_eq!(printed(0), "0 ns");
        assert_eq!(printed(850), "850 ns");
        assert_eq!(printed(999), "999 ns");
        assert_eq!(printed(1_000), "1.00 us");
        assert_eq!(printed(12_340), "12.3 us");
        assert_eq!(printed(123_400), "123 us");
        assert_eq!(printed(999_499), "999 us");
        assert_eq!(printed(999_500), "1.00 ms");
        assert_eq!(printed(4_561_000), "4.56 ms");
        assert_eq!(printed(45_610_000), "45.6 ms");
        assert_eq!(printed(1_200_000_000), "1.20 s ");
        assert_eq!(printed(125_000_000_000), "125 s ");
        // Rounding up to the next power of ten keeps three digits.
        assert_eq!(printed(9_996), "10.0 us");
        assert_eq!(printed(99_960), "100 us");
    }

    #[test]
    fn averages_round_down_to_whole_nanoseconds() {
        let mut stats = PhaseStats::new(4);
        for nanos in [1, 2] {
            stats.record(Duration::from_nanos(nanos));
        }
        assert_eq!(stats.average(), Duration::from_nanos(1));
    }
}
