//! operator-gen's code generator core: the IR, the marker grammar, checks and emitters.
//! No IO: callers hand in parsed sources and take back typed values and text.
