//! The local sentence encoder (all-MiniLM-L6-v2 through candle), its weights, and the vector cache.
