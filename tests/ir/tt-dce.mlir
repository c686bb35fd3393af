// RUN: tritium-opt %s -p tt-dce --split-input-file | filecheck %s

// Unused pure tile ops go, and so do the ops that only fed them (the pass iterates to a fixed point).
// CHECK-LABEL: func.func @dead_chain
// CHECK-NOT: tt.make_range
// CHECK-NOT: tt.splat
// CHECK-NOT: arith.addi
// CHECK: "tt.store"
// CHECK-NEXT: return
func.func @dead_chain(%p: !tt.ptr<f32>, %x: f32, %n: i32) {
  %r = "tt.make_range"() {start = 0 : i32, end = 16 : i32} : () -> tensor<16xi32>
  %s = "tt.splat"(%n) : (i32) -> tensor<16xi32>
  %a = arith.addi %r, %s : tensor<16xi32>
  "tt.store"(%p, %x) : (!tt.ptr<f32>, f32) -> ()
  return
}

// -----

// Ops with side effects stay even when their results are unused: a load may fault, a print prints.
// CHECK-LABEL: func.func @keeps_side_effects
// CHECK: "tt.load"
// CHECK: "tt.get_program_id"
// CHECK: "tt.print"
func.func @keeps_side_effects(%p: !tt.ptr<f32>) {
  %v = "tt.load"(%p) {operandSegmentSizes = array<i32: 1, 0, 0>} : (!tt.ptr<f32>) -> f32
  %pid = "tt.get_program_id"() {axis = 0 : i32} : () -> i32
  "tt.print"(%pid) {prefix = " pid: ", hex = false, is_signed = array<i32: 1>, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (i32) -> ()
  return
}
