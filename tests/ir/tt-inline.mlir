// RUN: tritium-opt %s -p tt-inline --split-input-file | filecheck %s

// A private function holding tile ops (which upstream `inline` refuses) is inlined, nested calls included;
// the callee itself stays for symbol-dce to remove.
// CHECK: func.func private @twice
// CHECK-NOT: call
// CHECK: func.func public @kernel
// CHECK-NOT: call
// CHECK: [[S:%[0-9]+]] = "tt.splat"(%arg0) : (f32) -> tensor<8xf32>
// CHECK: [[T:%[0-9]+]] = arith.addf [[S]], [[S]] : tensor<8xf32>
// CHECK: "tt.store"(%arg1, [[T]])
func.func private @splat8(%x: f32) -> tensor<8xf32> {
  %s = "tt.splat"(%x) : (f32) -> tensor<8xf32>
  return %s : tensor<8xf32>
}
func.func private @twice(%x: f32) -> tensor<8xf32> {
  %s = func.call @splat8(%x) : (f32) -> tensor<8xf32>
  %t = arith.addf %s, %s : tensor<8xf32>
  return %t : tensor<8xf32>
}
func.func public @kernel(%x: f32, %p: tensor<8x!tt.ptr<f32>>) {
  %v = func.call @twice(%x) : (f32) -> tensor<8xf32>
  "tt.store"(%p, %v) : (tensor<8x!tt.ptr<f32>>, tensor<8xf32>) -> ()
  return
}

// -----

// A call marked no_inline stays a call.
// CHECK-LABEL: func.func public @keeps
// CHECK: call @helper(%arg0) {no_inline}
func.func private @helper(%x: f32) -> tensor<8xf32> {
  %s = "tt.splat"(%x) : (f32) -> tensor<8xf32>
  return %s : tensor<8xf32>
}
func.func public @keeps(%x: f32) -> tensor<8xf32> {
  %v = func.call @helper(%x) {no_inline} : (f32) -> tensor<8xf32>
  return %v : tensor<8xf32>
}
