// RUN: tritium-opt %s -p tt-combine --split-input-file | filecheck %s

// broadcast(splat(x)) and expand_dims(splat(x)) become one splat of x.
// CHECK-LABEL: func.func @splat_then_broadcast
// CHECK-NOT: tt.broadcast
// CHECK-NOT: tt.expand_dims
// CHECK: [[B:%[0-9]+]] = "tt.splat"(%arg0) : (f32) -> tensor<16x16xf32>
// CHECK: [[E:%[0-9]+]] = "tt.splat"(%arg0) : (f32) -> tensor<1x16xf32>
// CHECK: return [[B]], [[E]]
func.func @splat_then_broadcast(%x: f32) -> (tensor<16x16xf32>, tensor<1x16xf32>) {
  %s = "tt.splat"(%x) : (f32) -> tensor<1x16xf32>
  %b = "tt.broadcast"(%s) : (tensor<1x16xf32>) -> tensor<16x16xf32>
  %t = "tt.splat"(%x) : (f32) -> tensor<16xf32>
  %e = "tt.expand_dims"(%t) {axis = 0 : i32} : (tensor<16xf32>) -> tensor<1x16xf32>
  return %b, %e : tensor<16x16xf32>, tensor<1x16xf32>
}

// -----

// addptr(addptr(p, a), b) becomes addptr(p, a + b) when the inner addptr has no other use.
// CHECK-LABEL: func.func @addptr_chain
// CHECK: [[SUM:%[0-9]+]] = arith.addi %arg1, %arg2 : i32
// CHECK-NEXT: "tt.addptr"(%arg0, [[SUM]])
// CHECK-NOT: "tt.addptr"
func.func @addptr_chain(%p: !tt.ptr<f32>, %a: i32, %b: i32) -> !tt.ptr<f32> {
  %q = "tt.addptr"(%p, %a) : (!tt.ptr<f32>, i32) -> !tt.ptr<f32>
  %r = "tt.addptr"(%q, %b) : (!tt.ptr<f32>, i32) -> !tt.ptr<f32>
  return %r : !tt.ptr<f32>
}

// -----

// An inner addptr with another use stays: folding would compute it twice.
// CHECK-LABEL: func.func @addptr_shared
// CHECK: [[Q:%[0-9]+]] = "tt.addptr"(%arg0, %arg1)
// CHECK: "tt.addptr"([[Q]], %arg2)
func.func @addptr_shared(%p: !tt.ptr<f32>, %a: i32, %b: i32) -> (!tt.ptr<f32>, !tt.ptr<f32>) {
  %q = "tt.addptr"(%p, %a) : (!tt.ptr<f32>, i32) -> !tt.ptr<f32>
  %r = "tt.addptr"(%q, %b) : (!tt.ptr<f32>, i32) -> !tt.ptr<f32>
  return %q, %r : !tt.ptr<f32>, !tt.ptr<f32>
}

// -----

// acc + dot(a, b, 0) accumulates in place: dot(a, b, acc).
// CHECK-LABEL: func.func @dot_accumulate
// CHECK: "tt.dot"(%arg0, %arg1, %arg2)
// CHECK-NOT: arith.addf
func.func @dot_accumulate(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>, %acc: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %z = arith.constant dense<0.0> : tensor<16x16xf32>
  %d = "tt.dot"(%a, %b, %z) {input_precision = "ieee", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = arith.addf %acc, %d : tensor<16x16xf32>
  return %s : tensor<16x16xf32>
}
