//! Answer-quality metrics (SQuAD EM and F1, answer recall, evidence recall) and the offline judge.
