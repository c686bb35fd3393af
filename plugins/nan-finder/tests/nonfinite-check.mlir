// RUN: tritium-opt %s -p nonfinite-check --split-input-file | filecheck %s
// RUN: tritium-opt %s -p 'nonfinite-check{mode=all}' --split-input-file | filecheck %s --check-prefix=ALL

// A masked store of floats gets three checks (NaN, +Inf, -Inf), each true where the mask is off.
// CHECK-LABEL: func.func @masked_store
// CHECK: [[D:%[0-9]+]] = arith.divf
// CHECK: [[NOTM:%[0-9]+]] = arith.xori %arg3, %{{.*}} : tensor<16xi1>
// CHECK: [[ORD:%[0-9]+]] = arith.cmpf ord, [[D]], [[D]]
// CHECK: arith.cmpf une, [[D]], %{{.*}}
// CHECK: arith.cmpf une, [[D]], %{{.*}}
// CHECK: [[OK:%[0-9]+]] = arith.ori [[ORD]], [[NOTM]]
// CHECK-NEXT: "tt.assert"([[OK]]) {message = "tritium-nanfinder: NaN stored to memory (the value comes from arith.divf
// CHECK: "tt.assert"({{.*}}) {message = "tritium-nanfinder: +Inf stored to memory
// CHECK: "tt.assert"({{.*}}) {message = "tritium-nanfinder: -Inf stored to memory
// CHECK-NEXT: "tt.store"
// ALL-LABEL: func.func @masked_store
// ALL: arith.divf
// ALL-NEXT: arith.cmpf ord
// ALL: "tt.assert"({{.*}}) {message = "tritium-nanfinder: NaN computed (the value comes from arith.divf
func.func @masked_store(%p: !tt.ptr<f32>, %x: tensor<16xf32>, %y: tensor<16xf32>, %m: tensor<16xi1>) {
  %ptrs = "tt.splat"(%p) : (!tt.ptr<f32>) -> tensor<16x!tt.ptr<f32>>
  %d = arith.divf %x, %y : tensor<16xf32>
  "tt.store"(%ptrs, %d, %m) : (tensor<16x!tt.ptr<f32>>, tensor<16xf32>, tensor<16xi1>) -> ()
  return
}

// -----

// Integer stores and combine regions are left alone.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: tt.assert
// ALL-LABEL: func.func @untouched
// ALL: "tt.reduce"
// ALL-NOT: tt.assert
// ALL: gpu.yield
// ALL: "tt.assert"
func.func @untouched(%p: !tt.ptr<i32>, %v: i32, %x: tensor<8xf32>) -> f32 {
  "tt.store"(%p, %v) : (!tt.ptr<i32>, i32) -> ()
  %r = "tt.reduce"(%x) ({
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    gpu.yield %s : f32
  }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<8xf32>) -> f32
  return %r : f32
}
