//! The ranking on a real catalog (filled in when the fixture lands).
