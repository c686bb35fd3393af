// RUN: not tritium-opt %s -p no-such-pass 2>&1 | filecheck %s

// The tool names the unknown pass, who asked for it, and what is registered.
// CHECK: asks for pass 'no-such-pass' (put there by the command line), which no plugin registers
// CHECK-SAME: tt-dce
func.func @f() {
  return
}
