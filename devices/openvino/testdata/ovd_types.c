/* ovdouble element types: names, widths, the three ov_element_type_e numberings, and conversion between
 * external memory and the executor's representation (f32 for floating types, int64 for the rest). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ovd.h"

/* The internal enum is the 2025.0.0 release numbering (layouts.txt). */
_Static_assert(T_UNDEF == 0 && T_DYNAMIC == 1 && T_BOOL == 2 && T_BF16 == 3 && T_F16 == 4 && T_F32 == 5 &&
                   T_F64 == 6 && T_I4 == 7 && T_I8 == 8 && T_I16 == 9 && T_I32 == 10 && T_I64 == 11 &&
                   T_U1 == 12 && T_U2 == 13 && T_U3 == 14 && T_U4 == 15 && T_U6 == 16 && T_U8 == 17 &&
                   T_U16 == 18 && T_U32 == 19 && T_U64 == 20 && T_NF4 == 21 && T_F8E4M3 == 22 &&
                   T_F8E5M2 == 23 && T_STRING == 24 && T_F4E2M1 == 25 && T_F8E8M0 == 26,
               "2025.0.0 ov_element_type_e (layouts.txt)");

/* 2025.1 and later (versions.txt columns 2025.1-2025.2 and 2026.1.2): DYNAMIC first, no UNDEFINED slot. */
enum {
    N2_DYNAMIC = 0, N2_BOOLEAN = 1, N2_BF16 = 2, N2_F16 = 3, N2_F32 = 4, N2_F64 = 5, N2_I4 = 6, N2_I8 = 7,
    N2_I16 = 8, N2_I32 = 9, N2_I64 = 10, N2_U1 = 11, N2_U2 = 12, N2_U3 = 13, N2_U4 = 14, N2_U6 = 15, N2_U8 = 16,
    N2_U16 = 17, N2_U32 = 18, N2_U64 = 19, N2_NF4 = 20, N2_F8E4M3 = 21, N2_F8E5M3 = 22, N2_STRING = 23,
    N2_F4E2M1 = 24, N2_F8E8M0 = 25
};
_Static_assert(N2_F32 == 4 && N2_U8 == 16 && N2_F8E8M0 == 25 && N2_BOOLEAN == 1, "versions.txt 2025.1+");
/* 2024.1 and older (openvino.md 2.8): no U2/U3/U6, no STRING/F4E2M1/F8E8M0. */
enum {
    N0_UNDEFINED = 0, N0_DYNAMIC = 1, N0_BOOLEAN = 2, N0_BF16 = 3, N0_F16 = 4, N0_F32 = 5, N0_F64 = 6, N0_I4 = 7,
    N0_I8 = 8, N0_I16 = 9, N0_I32 = 10, N0_I64 = 11, N0_U1 = 12, N0_U4 = 13, N0_U8 = 14, N0_U16 = 15, N0_U32 = 16,
    N0_U64 = 17, N0_NF4 = 18, N0_F8E4M3 = 19, N0_F8E5M3 = 20
};
_Static_assert(N0_U4 == 13 && N0_U8 == 14 && N0_F8E5M3 == 20, "openvino.md 2.8 <= 2024.1");

static const int num2[T_COUNT] = {
    [T_UNDEF] = -1, [T_DYNAMIC] = N2_DYNAMIC, [T_BOOL] = N2_BOOLEAN, [T_BF16] = N2_BF16, [T_F16] = N2_F16,
    [T_F32] = N2_F32, [T_F64] = N2_F64, [T_I4] = N2_I4, [T_I8] = N2_I8, [T_I16] = N2_I16, [T_I32] = N2_I32,
    [T_I64] = N2_I64, [T_U1] = N2_U1, [T_U2] = N2_U2, [T_U3] = N2_U3, [T_U4] = N2_U4, [T_U6] = N2_U6,
    [T_U8] = N2_U8, [T_U16] = N2_U16, [T_U32] = N2_U32, [T_U64] = N2_U64, [T_NF4] = N2_NF4,
    [T_F8E4M3] = N2_F8E4M3, [T_F8E5M2] = N2_F8E5M3, [T_STRING] = N2_STRING, [T_F4E2M1] = N2_F4E2M1,
    [T_F8E8M0] = N2_F8E8M0};
static const int num0[T_COUNT] = {
    [T_UNDEF] = N0_UNDEFINED, [T_DYNAMIC] = N0_DYNAMIC, [T_BOOL] = N0_BOOLEAN, [T_BF16] = N0_BF16,
    [T_F16] = N0_F16, [T_F32] = N0_F32, [T_F64] = N0_F64, [T_I4] = N0_I4, [T_I8] = N0_I8, [T_I16] = N0_I16,
    [T_I32] = N0_I32, [T_I64] = N0_I64, [T_U1] = N0_U1, [T_U2] = -1, [T_U3] = -1, [T_U4] = N0_U4, [T_U6] = -1,
    [T_U8] = N0_U8, [T_U16] = N0_U16, [T_U32] = N0_U32, [T_U64] = N0_U64, [T_NF4] = N0_NF4,
    [T_F8E4M3] = N0_F8E4M3, [T_F8E5M2] = N0_F8E5M3, [T_STRING] = -1, [T_F4E2M1] = -1, [T_F8E8M0] = -1};

int ovd_type_to_ext(ovd_type t) {
    if ((unsigned)t >= T_COUNT) return -1;
    switch (ovd_rel()->numbering) {
    case 0: return num0[t];
    case 1: return (int)t;
    default: return num2[t];
    }
}

int ovd_type_from_ext(int ext, ovd_type* t) {
    for (int i = 0; i < T_COUNT; i++) {
        /* 2025.1-2025.2 still list UNDEFINED = 0 as a deprecated alias of DYNAMIC: map 0 to DYNAMIC */
        if (i == T_UNDEF && ovd_rel()->numbering == 2) continue;
        if (ovd_type_to_ext((ovd_type)i) == ext) {
            *t = (ovd_type)i;
            return 0;
        }
    }
    return -1;
}

static const struct {
    const char* name;
    const char* legacy;
    int bits;
} info[T_COUNT] = {
    [T_UNDEF] = {"undefined", "UNSPECIFIED", 0}, [T_DYNAMIC] = {"dynamic", "DYNAMIC", 0},
    [T_BOOL] = {"boolean", "BOOL", 8},           [T_BF16] = {"bf16", "BF16", 16},
    [T_F16] = {"f16", "FP16", 16},               [T_F32] = {"f32", "FP32", 32},
    [T_F64] = {"f64", "FP64", 64},               [T_I4] = {"i4", "I4", 4},
    [T_I8] = {"i8", "I8", 8},                    [T_I16] = {"i16", "I16", 16},
    [T_I32] = {"i32", "I32", 32},                [T_I64] = {"i64", "I64", 64},
    [T_U1] = {"u1", "BIN", 1},                   [T_U2] = {"u2", "U2", 2},
    [T_U3] = {"u3", "U3", 3},                    [T_U4] = {"u4", "U4", 4},
    [T_U6] = {"u6", "U6", 6},                    [T_U8] = {"u8", "U8", 8},
    [T_U16] = {"u16", "U16", 16},                [T_U32] = {"u32", "U32", 32},
    [T_U64] = {"u64", "U64", 64},                [T_NF4] = {"nf4", "NF4", 4},
    [T_F8E4M3] = {"f8e4m3", "F8E4M3", 8},        [T_F8E5M2] = {"f8e5m2", "F8E5M2", 8},
    [T_STRING] = {"string", "STRING", 0},        [T_F4E2M1] = {"f4e2m1", "F4E2M1", 4},
    [T_F8E8M0] = {"f8e8m0", "F8E8M0", 8},
};

const char* ovd_type_name(ovd_type t) { return (unsigned)t < T_COUNT ? info[t].name : "?"; }

int ovd_type_from_str(const char* s, ovd_type* t) {
    if (!s) return -1;
    for (int i = 0; i < T_COUNT; i++)
        if (strcmp(s, info[i].name) == 0 || strcmp(s, info[i].legacy) == 0) {
            *t = (ovd_type)i;
            return 0;
        }
    static const struct {
        const char* s;
        ovd_type t;
    } extra[] = {{"FP32", T_F32}, {"FP16", T_F16}, {"I1", T_U1}, {"U1", T_U1}, {"BOOLEAN", T_BOOL},
                 {"bool", T_BOOL}, {"UNDEFINED", T_DYNAMIC}, {"f8e5m3", T_F8E5M2}};
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
        if (strcmp(s, extra[i].s) == 0) {
            *t = extra[i].t;
            return 0;
        }
    if (strcmp(s, "undefined") == 0) {
        *t = T_DYNAMIC; /* legacy spelling of dynamic (openvino.md 4.1) */
        return 0;
    }
    return -1;
}

int ovd_type_bits(ovd_type t) { return (unsigned)t < T_COUNT ? info[t].bits : 0; }

bool ovd_type_is_float(ovd_type t) {
    return t == T_BF16 || t == T_F16 || t == T_F32 || t == T_F64 || t == T_F8E4M3 || t == T_F8E5M2 ||
           t == T_F4E2M1 || t == T_F8E8M0 || t == T_NF4;
}

bool ovd_type_is_int(ovd_type t) {
    return t == T_BOOL || t == T_I4 || t == T_I8 || t == T_I16 || t == T_I32 || t == T_I64 || t == T_U4 ||
           t == T_U8 || t == T_U16 || t == T_U32 || t == T_U64 || t == T_U1 || t == T_U2 || t == T_U3 || t == T_U6;
}

bool ovd_type_supported(ovd_type t) {
    return ovd_type_is_float(t) ? t != T_NF4 : ovd_type_is_int(t) && t != T_U1 && t != T_U2 && t != T_U3 && t != T_U6;
}

size_t ovd_type_bytes(ovd_type t, int64_t n) { return (size_t)(((__int128)n * ovd_type_bits(t) + 7) / 8); }

/* ---- scalar conversions ---- */
float ovd_f16_to_f32(uint16_t h) {
    uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023, u;
    if (e == 0) {
        if (m == 0)
            u = s;
        else {
            float f = ldexpf((float)m, -24);
            return s ? -f : f;
        }
    } else if (e == 31)
        u = s | 0x7f800000u | (m << 13);
    else
        u = s | ((e + 112) << 23) | (m << 13);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint16_t ovd_f32_to_f16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t s = (u >> 16) & 0x8000;
    int32_t e = (int32_t)((u >> 23) & 255);
    uint32_t m = u & 0x7fffff;
    if (e == 255) return (uint16_t)(s | 0x7c00 | (m ? 0x200 : 0));
    int32_t he = e - 112;
    if (he >= 31) return (uint16_t)(s | 0x7c00);
    if (he <= 0) {
        if (he < -10) return (uint16_t)s;
        m |= 0x800000;
        int sh = 14 - he;
        uint32_t hm = m >> sh, rem = m & ((1u << sh) - 1), half = 1u << (sh - 1);
        if (rem > half || (rem == half && (hm & 1))) hm++;
        return (uint16_t)(s | hm);
    }
    uint32_t hm = m >> 13, rem = m & 0x1fff;
    uint32_t r = s | ((uint32_t)he << 10) | hm;
    if (rem > 0x1000 || (rem == 0x1000 && (hm & 1))) r++;
    return (uint16_t)r;
}

static float bf16_to_f32(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint16_t f32_to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffff) > 0x7f800000) return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

static float f8e4m3_to_f32(uint8_t b) {
    int s = b >> 7, e = (b >> 3) & 15, m = b & 7;
    float v;
    if (e == 15 && m == 7)
        v = NAN;
    else if (e == 0)
        v = ldexpf((float)m, -9);
    else
        v = ldexpf(1.0f + m / 8.0f, e - 7);
    return s ? -v : v;
}

static float f8e5m2_to_f32(uint8_t b) { return ovd_f16_to_f32((uint16_t)(b << 8)); }

static float f8e8m0_to_f32(uint8_t b) { return b == 0xff ? NAN : ldexpf(1.0f, (int)b - 127); }

static float f4e2m1_to_f32(uint8_t nib) {
    static const float v[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
    float x = v[nib & 7];
    return (nib & 8) ? -x : x;
}

/* nearest representable value by search: these formats have at most 256 codes */
static uint8_t f32_to_small(float f, float (*dec)(uint8_t), int codes) {
    if (isnan(f)) {
        for (int c = 0; c < codes; c++)
            if (isnan(dec((uint8_t)c))) return (uint8_t)c;
        return 0;
    }
    int best = 0;
    float bd = INFINITY;
    for (int c = 0; c < codes; c++) {
        float v = dec((uint8_t)c);
        if (isnan(v)) continue;
        float d = fabsf(v - f);
        if (d < bd || (d == bd && (c & 1) == 0 && (best & 1))) {
            bd = d;
            best = c;
        }
    }
    return (uint8_t)best;
}

static float dec_e4m3(uint8_t c) { return f8e4m3_to_f32(c); }
static float dec_e8m0(uint8_t c) { return f8e8m0_to_f32(c); }
static float dec_e2m1(uint8_t c) { return f4e2m1_to_f32(c); }

int64_t ovd_wrap_int(ovd_type t, int64_t v) {
    switch (t) {
    case T_BOOL: return v != 0;
    case T_I4: return (int64_t)((int8_t)(uint8_t)(v << 4) >> 4);
    case T_U4: return v & 15;
    case T_I8: return (int8_t)v;
    case T_U8: return (uint8_t)v;
    case T_I16: return (int16_t)v;
    case T_U16: return (uint16_t)v;
    case T_I32: return (int32_t)v;
    case T_U32: return (uint32_t)v;
    default: return v;
    }
}

void ovd_decode(ovd_type t, const void* src, int64_t n, void* dst) {
    const uint8_t* s = src;
    float* f = dst;
    int64_t* q = dst;
    switch (t) {
    case T_F32: memcpy(f, s, (size_t)n * 4); break;
    case T_F16:
    case T_BF16: {
        float (*conv)(uint16_t) = t == T_F16 ? ovd_f16_to_f32 : bf16_to_f32;
        for (int64_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, s + 2 * i, 2);
            f[i] = conv(h);
        }
        break;
    }
    case T_F64:
        for (int64_t i = 0; i < n; i++) {
            double d;
            memcpy(&d, s + 8 * i, 8);
            f[i] = (float)d;
        }
        break;
    case T_F8E4M3: for (int64_t i = 0; i < n; i++) f[i] = f8e4m3_to_f32(s[i]); break;
    case T_F8E5M2: for (int64_t i = 0; i < n; i++) f[i] = f8e5m2_to_f32(s[i]); break;
    case T_F8E8M0: for (int64_t i = 0; i < n; i++) f[i] = f8e8m0_to_f32(s[i]); break;
    case T_F4E2M1: /* element 2k in the low nibble */
        for (int64_t i = 0; i < n; i++) f[i] = f4e2m1_to_f32((uint8_t)(s[i / 2] >> ((i & 1) * 4)) & 15);
        break;
    case T_BOOL: for (int64_t i = 0; i < n; i++) q[i] = s[i] != 0; break;
    case T_U4: for (int64_t i = 0; i < n; i++) q[i] = (s[i / 2] >> ((i & 1) * 4)) & 15; break;
    case T_I4: for (int64_t i = 0; i < n; i++) q[i] = ovd_wrap_int(T_I4, (s[i / 2] >> ((i & 1) * 4)) & 15); break;
    case T_I8: for (int64_t i = 0; i < n; i++) q[i] = (int8_t)s[i]; break;
    case T_U8: for (int64_t i = 0; i < n; i++) q[i] = s[i]; break;
#define INTCASE(T, CT)                                \
    case T:                                           \
        for (int64_t i = 0; i < n; i++) {             \
            CT x;                                     \
            memcpy(&x, s + sizeof(CT) * i, sizeof x); \
            q[i] = (int64_t)x;                        \
        }                                             \
        break;
        INTCASE(T_I16, int16_t)
        INTCASE(T_U16, uint16_t)
        INTCASE(T_I32, int32_t)
        INTCASE(T_U32, uint32_t)
        INTCASE(T_U64, uint64_t)
#undef INTCASE
    case T_I64: memcpy(q, s, (size_t)n * 8); break;
    default: memset(dst, 0, (size_t)n * ovd_val_esize(t)); break;
    }
}

void ovd_encode(ovd_type t, const void* src, int64_t n, void* dst) {
    uint8_t* d = dst;
    const float* f = src;
    const int64_t* q = src;
    switch (t) {
    case T_F32: memcpy(d, f, (size_t)n * 4); break;
    case T_F16:
    case T_BF16: {
        uint16_t (*conv)(float) = t == T_F16 ? ovd_f32_to_f16 : f32_to_bf16;
        for (int64_t i = 0; i < n; i++) {
            uint16_t h = conv(f[i]);
            memcpy(d + 2 * i, &h, 2);
        }
        break;
    }
    case T_F64:
        for (int64_t i = 0; i < n; i++) {
            double x = f[i];
            memcpy(d + 8 * i, &x, 8);
        }
        break;
    case T_F8E4M3: for (int64_t i = 0; i < n; i++) d[i] = f32_to_small(f[i], dec_e4m3, 256); break;
    case T_F8E5M2: for (int64_t i = 0; i < n; i++) d[i] = (uint8_t)((ovd_f32_to_f16(f[i]) + 0x80) >> 8); break;
    case T_F8E8M0: for (int64_t i = 0; i < n; i++) d[i] = f32_to_small(f[i], dec_e8m0, 256); break;
    case T_F4E2M1:
        memset(d, 0, (size_t)(n + 1) / 2);
        for (int64_t i = 0; i < n; i++) d[i / 2] |= (uint8_t)(f32_to_small(f[i], dec_e2m1, 16) << ((i & 1) * 4));
        break;
    case T_U4:
    case T_I4:
        memset(d, 0, (size_t)(n + 1) / 2);
        for (int64_t i = 0; i < n; i++) d[i / 2] |= (uint8_t)((q[i] & 15) << ((i & 1) * 4));
        break;
    case T_BOOL: for (int64_t i = 0; i < n; i++) d[i] = q[i] != 0; break;
    case T_I8:
    case T_U8: for (int64_t i = 0; i < n; i++) d[i] = (uint8_t)q[i]; break;
#define INTCASE(T, CT)                                \
    case T:                                           \
        for (int64_t i = 0; i < n; i++) {             \
            CT x = (CT)q[i];                          \
            memcpy(d + sizeof(CT) * i, &x, sizeof x); \
        }                                             \
        break;
        INTCASE(T_I16, int16_t)
        INTCASE(T_U16, uint16_t)
        INTCASE(T_I32, int32_t)
        INTCASE(T_U32, uint32_t)
        INTCASE(T_U64, uint64_t)
#undef INTCASE
    case T_I64: memcpy(d, q, (size_t)n * 8); break;
    default: break;
    }
}

/* Convert rounds to the destination's precision (openvino.md 4.4; spec Convert-1) while keeping the executor's
 * f32 representation: a round trip through the external encoding. */
void ovd_round_to(ovd_type t, float* f, int64_t n) {
    if (t == T_F32 || t == T_F64) return;
    uint8_t tmp[256];
    for (int64_t i = 0; i < n; i += 64) {
        int64_t k = n - i < 64 ? n - i : 64;
        ovd_encode(t, f + i, k, tmp);
        ovd_decode(t, tmp, k, f + i);
    }
}
