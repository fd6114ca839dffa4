//! Results: medians, ratios, the printed table and the CSV / JSON files.

use std::fmt::Write as _;

use crate::Options;
use crate::cell::{Column, WORKLOADS};

/// One cell's result.
pub struct Outcome {
    /// The workload.
    pub workload: &'static str,
    /// The column.
    pub column: &'static str,
    /// The column's crate.
    pub crate_name: &'static str,
    /// The column's choices.
    pub choices: &'static str,
    /// `ns` (per run) or `B/entity`.
    pub unit: &'static str,
    /// Every sample, sorted.
    pub samples: Vec<f64>,
    /// The failed check, if any.
    pub error: Option<String>,
}

impl Outcome {
    /// A cell's result from its samples.
    pub fn new(column: &Column, unit: &'static str, mut samples: Vec<f64>, error: Option<String>) -> Self {
        samples.sort_by(f64::total_cmp);
        Outcome {
            workload: column.workload,
            column: column.name,
            crate_name: column.crate_name(),
            choices: column.choices,
            unit,
            samples,
            error,
        }
    }

    /// The median sample (NaN without samples).
    pub fn median(&self) -> f64 {
        let n = self.samples.len();
        match n {
            0 => f64::NAN,
            _ if n % 2 == 1 => self.samples[n / 2],
            _ => (self.samples[n / 2 - 1] + self.samples[n / 2]) / 2.0,
        }
    }

    fn min(&self) -> f64 {
        self.samples.first().copied().unwrap_or(f64::NAN)
    }

    fn max(&self) -> f64 {
        self.samples.last().copied().unwrap_or(f64::NAN)
    }

    /// Whether this column is one of the other crates (not reactecs, not
    /// the plain-Rust baseline).
    fn is_other_crate(&self) -> bool {
        self.crate_name != "reactecs" && self.crate_name != "baseline"
    }
}

/// The best (lowest) median among the other crates' checked columns of
/// `workload`.
fn best_other<'a>(results: &'a [Outcome], workload: &str) -> Option<&'a Outcome> {
    results
        .iter()
        .filter(|r| r.workload == workload && r.is_other_crate() && r.error.is_none())
        .min_by(|a, b| a.median().total_cmp(&b.median()))
}

fn baseline<'a>(results: &'a [Outcome], workload: &str) -> Option<&'a Outcome> {
    results
        .iter()
        .find(|r| r.workload == workload && r.crate_name == "baseline")
}

fn ratio(a: &Outcome, b: Option<&Outcome>) -> Option<f64> {
    b.map(|b| a.median() / b.median())
}

fn show(value: f64, unit: &str) -> String {
    match unit {
        "ns" if value >= 1e6 => format!("{:.2} ms", value / 1e6),
        "ns" if value >= 1e3 => format!("{:.1} us", value / 1e3),
        "ns" => format!("{value:.0} ns"),
        _ => format!("{value:.1} {unit}"),
    }
}

fn show_ratio(r: Option<f64>) -> String {
    r.map_or("-".to_owned(), |r| format!("{r:.2}"))
}

/// Prints each workload's columns, then the summary: each reactecs column
/// against the best other crate.
pub fn print(results: &[Outcome], options: &Options) {
    println!(
        "\n{} samples per cell, {} threads; medians (min..max); ratios of medians",
        options.samples, options.threads
    );
    for workload in WORKLOADS {
        let rows: Vec<&Outcome> = results.iter().filter(|r| r.workload == workload).collect();
        if rows.is_empty() {
            continue;
        }
        let (best, base) = (best_other(results, workload), baseline(results, workload));
        println!("\n{workload}");
        for r in rows {
            let status = r.error.as_ref().map_or(String::new(), |e| format!("  FAILED: {e}"));
            println!(
                "  {:<30} {:>10}  ({} .. {})  / best other {:>5}  / baseline {:>5}{status}",
                r.column,
                show(r.median(), r.unit),
                show(r.min(), r.unit),
                show(r.max(), r.unit),
                show_ratio(ratio(r, best)),
                show_ratio(ratio(r, base)),
            );
        }
    }
    println!("\n| workload | reactecs column | reactecs | best other crate | reactecs / best other | baseline |");
    println!("|---|---|---|---|---|---|");
    for workload in WORKLOADS {
        let best = best_other(results, workload);
        let base = baseline(results, workload);
        for r in results
            .iter()
            .filter(|r| r.workload == workload && r.crate_name == "reactecs")
        {
            println!(
                "| {workload} | `{}` | {} | {} | {} | {} |",
                r.column,
                show(r.median(), r.unit),
                best.map_or("-".to_owned(), |b| format!("{} {}", b.column, show(b.median(), b.unit))),
                show_ratio(ratio(r, best)),
                base.map_or("-".to_owned(), |b| show(b.median(), b.unit)),
            );
        }
    }
}

/// Writes every cell's result to `path`, as CSV or JSON by its extension.
pub fn write(path: &str, results: &[Outcome]) -> std::io::Result<()> {
    let text = if path.ends_with(".json") {
        json(results)
    } else {
        csv(results)
    };
    std::fs::write(path, text)
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

fn number(value: Option<f64>) -> String {
    value
        .filter(|v| v.is_finite())
        .map_or(String::new(), |v| format!("{v}"))
}

fn csv(results: &[Outcome]) -> String {
    let mut out = String::from(
        "workload,column,crate,unit,median,min,max,samples,ratio_to_best_other,ratio_to_baseline,verified,choices\n",
    );
    for r in results {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{}",
            r.workload,
            csv_field(r.column),
            r.crate_name,
            r.unit,
            number(Some(r.median())),
            number(Some(r.min())),
            number(Some(r.max())),
            r.samples.len(),
            number(ratio(r, best_other(results, r.workload))),
            number(ratio(r, baseline(results, r.workload))),
            r.error.is_none(),
            csv_field(r.choices),
        );
    }
    out
}

fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_number(value: Option<f64>) -> String {
    value
        .filter(|v| v.is_finite())
        .map_or("null".to_owned(), |v| format!("{v}"))
}

fn json(results: &[Outcome]) -> String {
    let mut out = String::from("[\n");
    for (i, r) in results.iter().enumerate() {
        let samples: Vec<String> = r.samples.iter().map(|s| format!("{s}")).collect();
        let _ = write!(
            out,
            "  {{\"workload\": {}, \"column\": {}, \"crate\": {}, \"unit\": {}, \"median\": {}, \"min\": {}, \"max\": {}, \
             \"ratio_to_best_other\": {}, \"ratio_to_baseline\": {}, \"verified\": {}, \"error\": {}, \"choices\": {}, \"samples\": [{}]}}",
            json_string(r.workload),
            json_string(r.column),
            json_string(r.crate_name),
            json_string(r.unit),
            json_number(Some(r.median())),
            json_number(Some(r.min())),
            json_number(Some(r.max())),
            json_number(ratio(r, best_other(results, r.workload))),
            json_number(ratio(r, baseline(results, r.workload))),
            r.error.is_none(),
            r.error.as_deref().map_or("null".to_owned(), json_string),
            json_string(r.choices),
            samples.join(", "),
        );
        out.push_str(if i + 1 < results.len() { ",\n" } else { "\n" });
    }
    out.push_str("]\n");
    out
}
