// RUN: tritium-opt %s -p wide-accumulate --split-input-file | filecheck %s
// RUN: tritium-opt %s -p 'wide-accumulate{scans=0}' --split-input-file | filecheck %s --check-prefix=NOSCAN

// An fp16 sum: extend, reduce in f32 (the combine region retyped), truncate the result.
// CHECK-LABEL: func.func @sum16
// CHECK: [[W:%[0-9]+]] = arith.extf %arg0 : tensor<64xf16> to tensor<64xf32>
// CHECK-NEXT: "tt.reduce"([[W]])
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: : (tensor<64xf32>) -> f32
// CHECK-NEXT: arith.truncf %{{.*}} : f32 to f16
func.func @sum16(%x: tensor<64xf16>) -> f16 {
  %r = "tt.reduce"(%x) ({
  ^bb0(%a: f16, %b: f16):
    %s = arith.addf %a, %b : f16
    gpu.yield %s : f16
  }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<64xf16>) -> f16
  return %r : f16
}

// -----

// A max reduction is exact in any width: left alone. So is an f32 sum.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: arith.extf
// CHECK: arith.maxnumf %{{.*}}, %{{.*}} : bf16
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
func.func @untouched(%x: tensor<64xbf16>, %y: tensor<64xf32>) -> (bf16, f32) {
  %m = "tt.reduce"(%x) ({
  ^bb0(%a: bf16, %b: bf16):
    %s = arith.maxnumf %a, %b : bf16
    gpu.yield %s : bf16
  }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<64xbf16>) -> bf16
  %r = "tt.reduce"(%y) ({
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    gpu.yield %s : f32
  }) {axis = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<64xf32>) -> f32
  return %m, %r : bf16, f32
}

// -----

// A bf16 cumulative sum along axis 1 keeps its shape; with scans=0 it is left alone.
// CHECK-LABEL: func.func @cumsum
// CHECK: arith.extf %arg0 : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK: "tt.scan"
// CHECK: arith.truncf %{{.*}} : tensor<4x8xf32> to tensor<4x8xbf16>
// NOSCAN-LABEL: func.func @cumsum
// NOSCAN-NOT: arith.extf
func.func @cumsum(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %r = "tt.scan"(%x) ({
  ^bb0(%a: bf16, %b: bf16):
    %s = arith.addf %a, %b : bf16
    gpu.yield %s : bf16
  }) {axis = 1 : i32, reverse = false, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x8xbf16>) -> tensor<4x8xbf16>
  return %r : tensor<4x8xbf16>
}
