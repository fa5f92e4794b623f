//! The bytes and headers of a LineUp Surface.
