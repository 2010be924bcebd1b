//! Filled in by a later issue; see ../shared/DESIGN.md.
