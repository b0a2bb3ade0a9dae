#![no_main]
// spmsim::verify::fuzz_targets::trace_insn under libFuzzer: an Err is a correct answer to
// bad input; a panic, a hang or a runaway heap is a bug.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = spmsim::verify::fuzz_targets::trace_insn(data);
});
