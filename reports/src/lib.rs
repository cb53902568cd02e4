//! Reports for ragrouter-bench: cost–accuracy Pareto frontiers and AIQ, the paper's tables and
//! figures (SVG and PNG with an embedded font), raw exports and one self-contained HTML report.
//! Analysis is kept apart from drawing.
