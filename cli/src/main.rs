//! The `lineup` command.

fn main() {}
