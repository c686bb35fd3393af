// RUN: tritium-opt %s -p tt-licm | filecheck %s

// A pure tile op whose operands come from outside the loop moves before it; one that depends on the
// induction variable, and any op with side effects, stays.
// CHECK-LABEL: func.func @hoist
// CHECK: [[INV:%[0-9]+]] = "tt.splat"(%arg0) : (f32) -> tensor<16xf32>
// CHECK-NEXT: "tt.splat"(%arg1)
// CHECK-NEXT: scf.for
// CHECK: "tt.splat"(%{{.*}}) : (i32) -> tensor<16xi32>
// CHECK: "tt.load"
// CHECK: arith.addf %{{.*}}, [[INV]]
func.func @hoist(%x: f32, %p: !tt.ptr<f32>, %lb: i32, %ub: i32, %st: i32) -> tensor<16xf32> {
  %init = arith.constant dense<0.0> : tensor<16xf32>
  %r = scf.for %i = %lb to %ub step %st iter_args(%acc = %init) -> (tensor<16xf32>) : i32 {
    %inv = "tt.splat"(%x) : (f32) -> tensor<16xf32>
    %var = "tt.splat"(%i) : (i32) -> tensor<16xi32>
    %ptrs = "tt.splat"(%p) : (!tt.ptr<f32>) -> tensor<16x!tt.ptr<f32>>
    %addr = "tt.addptr"(%ptrs, %var) : (tensor<16x!tt.ptr<f32>>, tensor<16xi32>) -> tensor<16x!tt.ptr<f32>>
    %v = "tt.load"(%addr) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<16x!tt.ptr<f32>>) -> tensor<16xf32>
    %s = arith.addf %v, %inv : tensor<16xf32>
    %t = arith.addf %acc, %s : tensor<16xf32>
    scf.yield %t : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}
