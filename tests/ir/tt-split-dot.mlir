// RUN: tritium-opt %s -p tt-split-dot --split-input-file | filecheck %s

// tf32x3: each operand is hi (low 13 mantissa bits cleared, a tf32 value) + lo (the rest, zero where the operand
// is not finite); lo*hi, hi*lo, then hi*hi accumulate into C, each a tf32 dot. In the first two, hi is zero where
// its operand is not finite: only hi*hi carries infinities and NaNs.
// CHECK-LABEL: func.func @tf32x3
// CHECK: [[FA:%[0-9]+]] = arith.cmpf olt, {{.*}} : tensor<16x16xf32>
// CHECK: [[MASK:%.*]] = arith.constant dense<-8192> : tensor<16x16xi32>
// CHECK: [[AHI:%[0-9]+]] = arith.bitcast {{.*}} : tensor<16x16xi32> to tensor<16x16xf32>
// CHECK: [[AR:%[0-9]+]] = arith.subf %arg0, [[AHI]]
// CHECK: arith.select [[FA]], [[AR]]
// CHECK: [[ALO:%[0-9]+]] = arith.bitcast {{.*}} : tensor<16x16xi32> to tensor<16x16xf32>
// CHECK: [[AHF:%[0-9]+]] = arith.select [[FA]], [[AHI]]
// CHECK: [[FB:%[0-9]+]] = arith.cmpf olt
// CHECK: [[BHI:%[0-9]+]] = arith.bitcast {{.*}} : tensor<16x16xi32> to tensor<16x16xf32>
// CHECK: [[BLO:%[0-9]+]] = arith.bitcast {{.*}} : tensor<16x16xi32> to tensor<16x16xf32>
// CHECK: [[BHF:%[0-9]+]] = arith.select [[FB]], [[BHI]]
// CHECK: [[D1:%[0-9]+]] = "tt.dot"([[ALO]], [[BHF]], %arg2) {input_precision = "tf32"
// CHECK: [[D2:%[0-9]+]] = "tt.dot"([[AHF]], [[BLO]], [[D1]]) {input_precision = "tf32"
// CHECK: [[D3:%[0-9]+]] = "tt.dot"([[AHI]], [[BHI]], [[D2]]) {input_precision = "tf32"
// CHECK-NOT: "tt.dot"
// CHECK: return [[D3]]
func.func @tf32x3(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>, %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %d = "tt.dot"(%a, %b, %c) {input_precision = "tf32x3", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  return %d : tensor<16x16xf32>
}

// -----

// bf16x3: hi = bf16(x), lo = bf16(x - hi); three bf16 dots with the f32 accumulator.
// CHECK-LABEL: func.func @bf16x3
// CHECK: [[AHI:%[0-9]+]] = arith.truncf %arg0 : tensor<32x16xf32> to tensor<32x16xbf16>
// CHECK: [[AW:%[0-9]+]] = arith.extf [[AHI]]
// CHECK: arith.subf %arg0, [[AW]]
// CHECK: [[ALO:%[0-9]+]] = arith.truncf {{.*}} : tensor<32x16xf32> to tensor<32x16xbf16>
// CHECK: [[BHI:%[0-9]+]] = arith.truncf %arg1 : tensor<16x8xf32> to tensor<16x8xbf16>
// CHECK: [[BLO:%[0-9]+]] = arith.truncf {{.*}} : tensor<16x8xf32> to tensor<16x8xbf16>
// CHECK: [[D1:%[0-9]+]] = "tt.dot"([[ALO]], {{%[0-9]+}}, %arg2) {input_precision = "ieee"
// CHECK-SAME: (tensor<32x16xbf16>, tensor<16x8xbf16>, tensor<32x8xf32>) -> tensor<32x8xf32>
// CHECK: [[D2:%[0-9]+]] = "tt.dot"({{%[0-9]+}}, [[BLO]], [[D1]])
// CHECK: "tt.dot"([[AHI]], [[BHI]], [[D2]])
// CHECK-NOT: "tt.dot"
func.func @bf16x3(%a: tensor<32x16xf32>, %b: tensor<16x8xf32>, %c: tensor<32x8xf32>) -> tensor<32x8xf32> {
  %d = "tt.dot"(%a, %b, %c) {input_precision = "bf16x3", max_num_imprecise_acc = 0 : i32} : (tensor<32x16xf32>, tensor<16x8xf32>, tensor<32x8xf32>) -> tensor<32x8xf32>
  return %d : tensor<32x8xf32>
}

// -----

// bf16x6: three parts per operand; the six products whose part orders add up to at most 2, smallest first.
// CHECK-LABEL: func.func @bf16x6
// CHECK-COUNT-6: arith.truncf
// CHECK-COUNT-6: "tt.dot"
// CHECK-NOT: "tt.dot"
func.func @bf16x6(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>, %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %d = "tt.dot"(%a, %b, %c) {input_precision = "bf16x6", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  return %d : tensor<16x16xf32>
}

// -----

// Other precisions and narrower operands are left alone.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: arith.truncf
// CHECK: "tt.dot"(%arg0, %arg1, %arg2) {input_precision = "tf32"
// CHECK: "tt.dot"(%arg0, %arg1, %arg2) {input_precision = "ieee"
// CHECK: "tt.dot"(%arg3, %arg4, %arg2) {input_precision = "bf16x3"
func.func @untouched(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>, %c: tensor<16x16xf32>, %h: tensor<16x16xf16>, %k: tensor<16x16xf16>) -> (tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) {
  %d1 = "tt.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %d2 = "tt.dot"(%a, %b, %c) {input_precision = "ieee", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %d3 = "tt.dot"(%h, %k, %c) {input_precision = "bf16x3", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32>) -> tensor<16x16xf32>
  return %d1, %d2, %d3 : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>
}
