//! Figures, their statistics and ratios, and how they are printed and written.

use std::time::Duration;

use serde_json::{json, Map, Value};

/// `d` in milliseconds, the unit of every latency figure.
pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Percentile `p` (0..=100) of `samples` (nearest rank); 0 when empty.
pub(crate) fn percentile(samples: &[f64], p: f64) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The summary of one set of samples.
pub(crate) fn summary(samples: &[f64]) -> Value {
    json!({
        "n": samples.len(),
        "p50": round(percentile(samples, 50.0)),
        "p95": round(percentile(samples, 95.0)),
        "p99": round(percentile(samples, 99.0)),
        "min": round(samples.iter().copied().fold(f64::INFINITY, f64::min).min(1e12)),
        "max": round(samples.iter().copied().fold(0.0, f64::max)),
    })
}

pub(crate) fn round(v: f64) -> f64 {
    if v.is_finite() {
        (v * 1000.0).round() / 1000.0
    } else {
        0.0
    }
}

/// One measured figure: ours beside the baselines, with the ratios ours/baseline.
#[derive(Debug, Clone)]
pub(crate) struct Figure {
    pub(crate) name: String,
    pub(crate) unit: &'static str,
    /// The statistic the ratios are given for (`p50`, `p95`, `p99`, or `value`).
    pub(crate) stats: Vec<&'static str>,
    pub(crate) ours: Value,
    pub(crate) plain: Option<Value>,
    pub(crate) hardened: Option<Value>,
    pub(crate) note: String,
}

impl Figure {
    /// Latency samples (milliseconds) of ours and each baseline.
    pub(crate) fn samples(
        name: &str,
        stats: &[&'static str],
        ours: &[f64],
        plain: Option<&[f64]>,
        hardened: Option<&[f64]>,
    ) -> Self {
        Self {
            name: name.to_owned(),
            unit: "ms",
            stats: stats.to_vec(),
            ours: summary(ours),
            plain: plain.map(summary),
            hardened: hardened.map(summary),
            note: String::new(),
        }
    }

    /// Single values.
    pub(crate) fn values(
        name: &str,
        unit: &'static str,
        ours: f64,
        plain: Option<f64>,
        hardened: Option<f64>,
    ) -> Self {
        let v = |x: f64| json!({ "value": round(x) });
        Self {
            name: name.to_owned(),
            unit,
            stats: vec!["value"],
            ours: v(ours),
            plain: plain.map(v),
            hardened: hardened.map(v),
            note: String::new(),
        }
    }

    pub(crate) fn with_note(mut self, note: impl Into<String>) -> Self {
        self.note = note.into();
        self
    }

    fn stat(v: &Value, stat: &str) -> Option<f64> {
        v.get(stat).and_then(Value::as_f64)
    }

    fn ratio(&self, baseline: Option<&Value>, stat: &str) -> Option<f64> {
        let ours = Self::stat(&self.ours, stat)?;
        let base = Self::stat(baseline?, stat)?;
        (base > 0.0).then(|| round(ours / base))
    }

    pub(crate) fn to_json(&self) -> Value {
        let mut ratios_plain = Map::new();
        let mut ratios_hardened = Map::new();
        for stat in &self.stats {
            if let Some(r) = self.ratio(self.plain.as_ref(), stat) {
                ratios_plain.insert((*stat).to_owned(), json!(r));
            }
            if let Some(r) = self.ratio(self.hardened.as_ref(), stat) {
                ratios_hardened.insert((*stat).to_owned(), json!(r));
            }
        }
        json!({
            "name": self.name,
            "unit": self.unit,
            "stats": self.stats,
            "ours": self.ours,
            "plain": self.plain,
            "hardened": self.hardened,
            "ratio_ours_over_plain": ratios_plain,
            "ratio_ours_over_hardened": ratios_hardened,
            "note": self.note,
        })
    }

    /// Table rows: one per statistic.
    pub(crate) fn rows(&self) -> Vec<[String; 7]> {
        let cell = |v: Option<&Value>, stat: &str| {
            v.and_then(|v| Self::stat(v, stat))
                .map_or("–".to_owned(), |x| format!("{x:.2}"))
        };
        let ratio = |r: Option<f64>| r.map_or("–".to_owned(), |x| format!("{x:.2}×"));
        self.stats
            .iter()
            .map(|stat| {
                [
                    self.name.clone(),
                    format!("{stat} ({})", self.unit),
                    cell(Some(&self.ours), stat),
                    cell(self.plain.as_ref(), stat),
                    cell(self.hardened.as_ref(), stat),
                    ratio(self.ratio(self.plain.as_ref(), stat)),
                    ratio(self.ratio(self.hardened.as_ref(), stat)),
                ]
            })
            .collect()
    }
}

const HEADER: [&str; 7] = [
    "figure",
    "stat",
    "ours",
    "raw plain",
    "raw hardened",
    "ours/plain",
    "ours/hardened",
];

/// The figures as a plain-text table.
pub(crate) fn table(figures: &[Figure]) -> String {
    let rows: Vec<[String; 7]> = figures.iter().flat_map(Figure::rows).collect();
    let mut widths = HEADER.map(str::len);
    for row in &rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
    };
    let mut out = line(HEADER.iter().map(|s| (*s).to_owned()).collect());
    out.push('\n');
    for row in rows {
        out.push_str(&line(row.to_vec()));
        out.push('\n');
    }
    out
}

/// A figure back from its JSON (`Figure::to_json`).
pub(crate) fn from_json(value: &Value) -> Figure {
    let unit = match value["unit"].as_str() {
        Some("MiB") => "MiB",
        Some("1/s") => "1/s",
        _ => "ms",
    };
    let known = ["p50", "p95", "p99", "value"];
    let mut stats: Vec<&'static str> = value["stats"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| known.iter().copied().find(|k| Some(*k) == s.as_str()))
        .collect();
    if stats.is_empty() {
        stats = known
            .iter()
            .copied()
            .filter(|k| {
                value["ratio_ours_over_plain"].get(*k).is_some()
                    || value["ratio_ours_over_hardened"].get(*k).is_some()
            })
            .collect();
    }
    if stats.is_empty() {
        stats = if value["ours"].get("value").is_some() {
            vec!["value"]
        } else {
            vec!["p50", "p99"]
        };
    }
    let some = |v: &Value| (!v.is_null()).then(|| v.clone());
    Figure {
        name: value["name"].as_str().unwrap_or_default().to_owned(),
        unit,
        stats,
        ours: value["ours"].clone(),
        plain: some(&value["plain"]),
        hardened: some(&value["hardened"]),
        note: value["note"].as_str().unwrap_or_default().to_owned(),
    }
}

/// The figures as a Markdown table.
pub(crate) fn markdown_table(figures: &[Figure]) -> String {
    let mut out = format!("| {} |\n|{}\n", HEADER.join(" | "), " --- |".repeat(7));
    for figure in figures {
        for row in figure.rows() {
            out.push_str(&format!("| {} |\n", row.join(" | ")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let s: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&s, 50.0), 50.0);
        assert_eq!(percentile(&s, 99.0), 99.0);
        assert_eq!(percentile(&[3.0], 95.0), 3.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
    }

    #[test]
    fn ratios_are_ours_over_baseline() {
        let f = Figure::samples("x", &["p50"], &[2.0], Some(&[1.0]), Some(&[4.0]));
        let j = f.to_json();
        assert_eq!(j["ratio_ours_over_plain"]["p50"], 2.0);
        assert_eq!(j["ratio_ours_over_hardened"]["p50"], 0.5);
        assert!(table(std::slice::from_ref(&f)).contains("2.00×"));
        let back = from_json(&f.to_json());
        assert_eq!(back.to_json(), f.to_json());
    }
}
