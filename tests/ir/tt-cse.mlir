// RUN: tritium-opt %s -p tt-cse --split-input-file | filecheck %s

// Identical pure tile ops in one block become one; its uses are redirected to the first.
// CHECK-LABEL: func.func @merges_duplicates
// CHECK: [[S:%[0-9]+]] = "tt.splat"(%arg0)
// CHECK-NOT: "tt.splat"
// CHECK: arith.addi [[S]], [[S]]
func.func @merges_duplicates(%n: i32) -> tensor<16xi32> {
  %a = "tt.splat"(%n) : (i32) -> tensor<16xi32>
  %b = "tt.splat"(%n) : (i32) -> tensor<16xi32>
  %c = arith.addi %a, %b : tensor<16xi32>
  return %c : tensor<16xi32>
}

// -----

// Different attributes, different result types, or side effects: nothing is merged.
// CHECK-LABEL: func.func @keeps_distinct
// CHECK: "tt.make_range"() {end = 16 : i32, start = 0 : i32}
// CHECK: "tt.make_range"() {end = 32 : i32, start = 16 : i32}
// CHECK: "tt.load"
// CHECK: "tt.load"
func.func @keeps_distinct(%p: !tt.ptr<f32>) -> (tensor<16xi32>, tensor<16xi32>, f32, f32) {
  %a = "tt.make_range"() {start = 0 : i32, end = 16 : i32} : () -> tensor<16xi32>
  %b = "tt.make_range"() {start = 16 : i32, end = 32 : i32} : () -> tensor<16xi32>
  %x = "tt.load"(%p) {operandSegmentSizes = array<i32: 1, 0, 0>} : (!tt.ptr<f32>) -> f32
  %y = "tt.load"(%p) {operandSegmentSizes = array<i32: 1, 0, 0>} : (!tt.ptr<f32>) -> f32
  return %a, %b, %x, %y : tensor<16xi32>, tensor<16xi32>, f32, f32
}

// -----

// Ops in different blocks are not merged (the first would not dominate the second).
// CHECK-LABEL: func.func @other_block
// CHECK: "tt.splat"
// CHECK: scf.for
// CHECK: "tt.splat"
func.func @other_block(%n: i32, %lb: index, %ub: index, %st: index) -> tensor<16xi32> {
  %a = "tt.splat"(%n) : (i32) -> tensor<16xi32>
  %r = scf.for %i = %lb to %ub step %st iter_args(%acc = %a) -> (tensor<16xi32>) {
    %b = "tt.splat"(%n) : (i32) -> tensor<16xi32>
    %s = arith.addi %acc, %b : tensor<16xi32>
    scf.yield %s : tensor<16xi32>
  }
  return %r : tensor<16xi32>
}

// -----

// Reductions are compared by their combine regions (up to value names): equal ones merge, a different combine
// stays. (They were compared by their printed form, which names their results: equal reductions never merged.)
// CHECK-LABEL: func.func @reductions
// CHECK: [[R:%[0-9]+]] = "tt.reduce"(%arg0)
// CHECK: arith.addf
// CHECK: "tt.reduce"(%arg0)
// CHECK: arith.mulf
// CHECK-NOT: "tt.reduce"
// CHECK: arith.addf [[R]], [[R]]
func.func @reductions(%x: tensor<16xf32>) -> (f32, f32) {
  %a = "tt.reduce"(%x) ({
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    gpu.yield %s : f32
  }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<16xf32>) -> f32
  %m = "tt.reduce"(%x) ({
  ^bb0(%p: f32, %q: f32):
    %s = arith.mulf %p, %q : f32
    gpu.yield %s : f32
  }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<16xf32>) -> f32
  %b = "tt.reduce"(%x) ({
  ^bb0(%u: f32, %v: f32):
    %t = arith.addf %u, %v : f32
    gpu.yield %t : f32
  }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<16xf32>) -> f32
  %c = arith.addf %a, %b : f32
  return %c, %m : f32, f32
}
