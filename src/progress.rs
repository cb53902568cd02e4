//! The one progress-bar style of the binary's long steps (stderr; hidden when not a terminal).

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `len` steps named `msg`; `unit` (e.g. "tuples") follows the count when given.
pub(crate) fn bar(len: u64, msg: &str, unit: &str) -> ProgressBar {
    let unit = if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    };
    let style = ProgressStyle::with_template(&format!(
        "{{msg:>20}} {{bar:40}} {{pos}}/{{len}}{unit} [{{elapsed_precise}}, eta {{eta}}]"
    ))
    .expect("valid template");
    ProgressBar::new(len)
        .with_message(msg.to_owned())
        .with_style(style)
}
