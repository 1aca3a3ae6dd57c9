//! A stand-in for operator-gen-runtime: the fixture is read, never built.
