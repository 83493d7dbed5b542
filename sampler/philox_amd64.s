//go:build !purego

#include "textflag.h"

// func philox8AVX2(in *philox8In, out *[16]uint64)
//
// Philox4x32-10 of eight counters at once, one counter per 32-bit lane of
// a YMM register: Y0..Y3 hold words 0..3 of the eight counters, each
// lane's own (the counters of eight nodes' streams, or eight counters of
// one). A round's 32x32->64 multiplies are VPMULUDQ of the even lanes and
// of the odd lanes shifted down, their high and low halves blended back
// into lanes. The output is interleaved into draws: out[2j] = word 0 |
// word 1 << 32 and out[2j+1] = word 2 | word 3 << 32 of counter j, as
// Stream.Pair gives them.
TEXT ·philox8AVX2(SB), NOSPLIT, $0-16
	MOVQ in+0(FP), AX
	MOVQ out+8(FP), DI

	VMOVDQU 0(AX), Y0        // words 0..3 of the eight counters
	VMOVDQU 32(AX), Y1
	VMOVDQU 64(AX), Y2
	VMOVDQU 96(AX), Y3
	VPBROADCASTD 128(AX), Y4 // key
	VPBROADCASTD 132(AX), Y5
	VPBROADCASTD 136(AX), Y6 // multipliers
	VPBROADCASTD 140(AX), Y7
	VPBROADCASTD 144(AX), Y8 // Weyl increments of the key
	VPBROADCASTD 148(AX), Y9

	MOVQ $10, CX

round:
	// Products of word 0 by M0 and of word 2 by M1, even and odd lanes.
	VPMULUDQ Y6, Y0, Y10     // word 0, even lanes: 64-bit products
	VPSRLQ   $32, Y0, Y11
	VPMULUDQ Y6, Y11, Y11    // word 0, odd lanes
	VPMULUDQ Y7, Y2, Y12     // word 2, even lanes
	VPSRLQ   $32, Y2, Y13
	VPMULUDQ Y7, Y13, Y13    // word 2, odd lanes

	// word 2 = hi(word 0 * M0) ^ word 3 ^ key 1; word 3 = lo(word 0 * M0)
	VPSRLQ   $32, Y10, Y14
	VPBLENDD $0xAA, Y11, Y14, Y14
	VPXOR    Y3, Y14, Y14
	VPXOR    Y5, Y14, Y2
	VPSLLQ   $32, Y11, Y11
	VPBLENDD $0xAA, Y11, Y10, Y3

	// word 0 = hi(word 2 * M1) ^ word 1 ^ key 0; word 1 = lo(word 2 * M1)
	VPSRLQ   $32, Y12, Y15
	VPBLENDD $0xAA, Y13, Y15, Y15
	VPXOR    Y1, Y15, Y15
	VPXOR    Y4, Y15, Y0
	VPSLLQ   $32, Y13, Y13
	VPBLENDD $0xAA, Y13, Y12, Y1

	// The next round's key.
	VPADDD Y8, Y4, Y4
	VPADDD Y9, Y5, Y5
	DECQ   CX
	JNZ    round

	// Interleave into draws. Within each 128-bit half, A = q0 q1, B = q2
	// q3 (lanes 0-3; 4-7 in the high half), where qj = word 0 | word 1 <<
	// 32 of counter j, and C, D the same of words 2 and 3 (rj).
	VPUNPCKLDQ Y1, Y0, Y10   // A
	VPUNPCKHDQ Y1, Y0, Y11   // B
	VPUNPCKLDQ Y3, Y2, Y12   // C
	VPUNPCKHDQ Y3, Y2, Y13   // D
	VPUNPCKLQDQ Y12, Y10, Y0 // q0 r0 | q4 r4
	VPUNPCKHQDQ Y12, Y10, Y1 // q1 r1 | q5 r5
	VPUNPCKLQDQ Y13, Y11, Y2 // q2 r2 | q6 r6
	VPUNPCKHQDQ Y13, Y11, Y3 // q3 r3 | q7 r7
	VPERM2I128 $0x20, Y1, Y0, Y4 // q0 r0 q1 r1
	VPERM2I128 $0x20, Y3, Y2, Y5 // q2 r2 q3 r3
	VPERM2I128 $0x31, Y1, Y0, Y6 // q4 r4 q5 r5
	VPERM2I128 $0x31, Y3, Y2, Y7 // q6 r6 q7 r7
	VMOVDQU Y4, 0(DI)
	VMOVDQU Y5, 32(DI)
	VMOVDQU Y6, 64(DI)
	VMOVDQU Y7, 96(DI)
	VZEROUPPER
	RET
