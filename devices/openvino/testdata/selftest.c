/* ovdouble self-test: drives the library through the public C API on hand-written IRs (openvino.md 4.3 and
 * others), checks results against values computed here, and checks that invalid IRs, wrong bindings and injected
 * faults are rejected. Built and run by `build.sh --selftest OUTDIR`; runs in about a second.
 * Sanitizer run: CFLAGS="-O1 -g -fsanitize=address,undefined" build.sh --selftest OUTDIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ovd_decl.h"

static int passed, failed;

#define EXPECT(cond, ...)                                   \
    do {                                                    \
        if (cond) {                                         \
            passed++;                                       \
        } else {                                            \
            failed++;                                       \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);     \
            printf(__VA_ARGS__);                            \
            printf("\n");                                   \
        }                                                   \
    } while (0)

static char lasterr[4096];
static const char* err(void) {
    const char* m = ov_get_last_err_msg();
    snprintf(lasterr, sizeof lasterr, "%s", m ? m : "(none)");
    ov_free(m);
    return lasterr;
}

/* ---- a tiny IR writer: layer ids are sequential, ports follow the convention inputs 0..k-1, outputs k.. ---- */
typedef struct {
    char xml[1 << 16];
    size_t n;
    char edges[1 << 14];
    size_t ne;
    int nl;
    int out_base[256];
} ir;

typedef struct {
    int layer, out;
} src;

static void ir_begin(ir* b, const char* name) {
    memset(b, 0, sizeof *b);
    b->n = (size_t)snprintf(b->xml, sizeof b->xml, "<?xml version=\"1.0\"?>\n<net name=\"%s\" version=\"11\">\n<layers>\n", name);
}

#define APP(b, ...) ((b)->n += (size_t)snprintf((b)->xml + (b)->n, sizeof((b)->xml) - (b)->n, __VA_ARGS__))

static int ir_param(ir* b, const char* name, const char* et, const char* shape, const char* prec) {
    int id = b->nl++;
    b->out_base[id] = 0;
    APP(b, "<layer id=\"%d\" name=\"%s\" type=\"Parameter\" version=\"opset1\"><data shape=\"%s\" element_type=\"%s\"/>"
           "<output><port id=\"0\" precision=\"%s\" names=\"%s\"/></output></layer>\n", id, name, shape, et, prec, name);
    return id;
}

static int ir_const(ir* b, const char* name, const char* et, const char* shape, long off, long size, const char* prec) {
    int id = b->nl++;
    b->out_base[id] = 0;
    APP(b, "<layer id=\"%d\" name=\"%s\" type=\"Const\" version=\"opset1\"><data element_type=\"%s\" shape=\"%s\" "
           "offset=\"%ld\" size=\"%ld\"/><output><port id=\"0\" precision=\"%s\"/></output></layer>\n",
        id, name, et, shape, off, size, prec);
    return id;
}

/* op with `nin` inputs and `nout` outputs of precision prec; names (may be NULL) on output 0 */
static int ir_op(ir* b, const char* type, const char* opset, const char* data, int nin, const src* in, int nout,
                 const char* prec, const char* names) {
    int id = b->nl++;
    b->out_base[id] = nin;
    APP(b, "<layer id=\"%d\" name=\"%s_%d\" type=\"%s\" version=\"%s\">", id, type, id, type, opset);
    if (data) APP(b, "<data %s/>", data);
    if (nin) {
        APP(b, "<input>");
        for (int i = 0; i < nin; i++) APP(b, "<port id=\"%d\"/>", i);
        APP(b, "</input>");
    }
    if (nout) {
        APP(b, "<output>");
        for (int i = 0; i < nout; i++)
            APP(b, "<port id=\"%d\" precision=\"%s\"%s%s%s/>", nin + i, prec, names && i == 0 ? " names=\"" : "",
                names && i == 0 ? names : "", names && i == 0 ? "\"" : "");
        APP(b, "</output>");
    }
    APP(b, "</layer>\n");
    for (int i = 0; i < nin; i++)
        b->ne += (size_t)snprintf(b->edges + b->ne, sizeof b->edges - b->ne,
                                  "<edge from-layer=\"%d\" from-port=\"%d\" to-layer=\"%d\" to-port=\"%d\"/>\n", in[i].layer,
                                  b->out_base[in[i].layer] + in[i].out, id, i);
    return id;
}

static int ir_result(ir* b, src s) { return ir_op(b, "Result", "opset1", NULL, 1, &s, 0, "FP32", NULL); }

static const char* ir_end(ir* b) {
    APP(b, "</layers>\n<edges>\n%s</edges>\n</net>\n", b->edges);
    return b->xml;
}

#define S(l) ((src){(l), 0})

/* ---- element type codes in the 2025.1+ numbering (the default presentation) ---- */
enum { T_BOOL = 1, T_F16 = 3, T_F32 = 4, T_I32 = 9, T_I64 = 10, T_U8 = 16 };

/* ---- helpers over the API ---- */
static ov_core_t* core;

static ov_tensor_t* host_tensor(int et, int rank, const int64_t* dims, void* data) {
    ov_shape_t s;
    ov_shape_create(rank, dims, &s);
    ov_tensor_t* t = NULL;
    ov_status_e st = ov_tensor_create_from_host_ptr(et, s, data, &t);
    ov_shape_free(&s);
    EXPECT(st == OK, "create_from_host_ptr: %d %s", st, err());
    return t;
}

static ov_model_t* read(const char* xml, void* w, size_t wsize, ov_status_e* st) {
    ov_tensor_t* wt = NULL;
    if (w) {
        int64_t d[1] = {(int64_t)wsize};
        wt = host_tensor(T_U8, 1, d, w);
    }
    ov_model_t* m = NULL;
    *st = ov_core_read_model_from_memory_buffer(core, xml, strlen(xml), wt, &m);
    ov_tensor_free(wt); /* the model keeps what it needs; the memory stays ours */
    return m;
}

static bool close_to(float a, float b, float tol) { return fabsf(a - b) <= tol * (1 + fabsf(b)); }


/* y = MatMul(x, W^T) + b, openvino.md 4.3 */
/* x's shape: "?,4" (dynamic), or "2,4" for a device that takes static shapes only */
static const char* matmul_add_ir_x(ir* b, const char* xshape) {
    ir_begin(b, "matmul_add");
    int x = ir_param(b, "x", "f32", xshape, "FP32");
    int w = ir_const(b, "W", "f32", "3, 4", 0, 48, "FP32");
    int mm = ir_op(b, "MatMul", "opset1", "transpose_a=\"false\" transpose_b=\"true\"", 2, (src[]){S(x), S(w)}, 1, "FP32", NULL);
    int bb = ir_const(b, "b", "f32", "1, 3", 64, 12, "FP32");
    int add = ir_op(b, "Add", "opset1", "auto_broadcast=\"numpy\"", 2, (src[]){S(mm), S(bb)}, 1, "FP32", "y");
    ir_result(b, S(add));
    return ir_end(b);
}

static const char* matmul_add_ir(ir* b) { return matmul_add_ir_x(b, "?,4"); }

static float blob76[19];

static void test_matmul_add(void) {
    memset(blob76, 0, sizeof blob76);
    for (int i = 0; i < 12; i++) blob76[i] = (float)i;
    blob76[16] = 0.5f, blob76[17] = -1, blob76[18] = 2;
    ir b;
    ov_status_e st;
    ov_model_t* m = read(matmul_add_ir(&b), blob76, 76, &st);
    EXPECT(st == OK, "read matmul_add: %s", err());
    if (!m) return;
    ov_output_const_port_t* port = NULL;
    EXPECT(ov_model_const_output_by_index(m, 0, &port) == OK, "output port");
    char* pname = NULL;
    ov_partial_shape_t ps;
    EXPECT(ov_port_get_any_name(port, &pname) == OK && strcmp(pname, "y") == 0, "output name %s", pname);
    EXPECT(ov_port_get_partial_shape(port, &ps) == OK && ov_partial_shape_is_dynamic(ps), "dynamic output");
    const char* pstr = ov_partial_shape_to_string(ps);
    EXPECT(strcmp(pstr, "[?,3]") == 0, "partial shape string %s", pstr);
    ov_free(pstr);
    ov_partial_shape_free(&ps);
    ov_free(pname);
    int pet = -1;
    EXPECT(ov_port_get_element_type(port, &pet) == OK && pet == T_F32, "port type %d", pet);
    ov_shape_t psh;
    EXPECT(ov_const_port_get_shape(port, &psh) == GENERAL_ERROR, "get_shape of a dynamic port");
    ov_compiled_model_t* cm = NULL;
    st = ov_core_compile_model(core, m, "CPU", 0, &cm);
    EXPECT(st == OK, "compile: %s", err());
    ov_model_free(m);
    ov_infer_request_t* r = NULL;
    EXPECT(ov_compiled_model_create_infer_request(cm, &r) == OK, "request");
    float x[8] = {1, 1, 1, 1, 0, 1, 0, 0}, y[6] = {0};
    ov_tensor_t* tx = host_tensor(T_F32, 2, (int64_t[]){2, 4}, x);
    ov_tensor_t* ty = host_tensor(T_F32, 2, (int64_t[]){2, 3}, y);
    EXPECT(ov_infer_request_set_input_tensor_by_index(r, 0, tx) == OK, "set x: %s", err());
    EXPECT(ov_infer_request_set_tensor_by_const_port(r, port, ty) == OK, "set y by port: %s", err());
    ov_output_const_port_free(port);
    EXPECT(ov_infer_request_infer(r) == OK, "infer: %s", err());
    float want[6] = {6.5f, 21, 40, 1.5f, 4, 11};
    for (int i = 0; i < 6; i++) EXPECT(y[i] == want[i], "y[%d] = %g, want %g", i, y[i], want[i]);
    /* a smaller batch through the same bound output: the tensor is reshaped to the exact result */
    int64_t before = ovdouble_stat("infer.output_reshaped");
    ov_tensor_t* tx1 = host_tensor(T_F32, 2, (int64_t[]){1, 4}, x + 4);
    EXPECT(ov_infer_request_set_tensor(r, "x", tx1) == OK, "set by name: %s", err());
    EXPECT(ov_infer_request_infer(r) == OK, "infer 1 row: %s", err());
    EXPECT(y[0] == 1.5f && y[2] == 11 && y[3] == 1.5f, "1-row result %g %g (row 2 untouched %g)", y[0], y[2], y[3]);
    EXPECT(ovdouble_stat("infer.output_reshaped") == before + 1, "output reshape counted");
    ov_tensor_t* out = NULL;
    EXPECT(ov_infer_request_get_output_tensor_by_index(r, 0, &out) == OK, "get output");
    ov_shape_t os;
    ov_tensor_get_shape(out, &os);
    EXPECT(os.rank == 2 && os.dims[0] == 1 && os.dims[1] == 3, "output shape after reshape");
    ov_shape_free(&os);
    /* a larger batch than the bound output holds is an error, and the output stays as it was */
    float x3[12] = {0}, y_before = y[0];
    ov_tensor_t* tx3 = host_tensor(T_F32, 2, (int64_t[]){3, 4}, x3);
    ov_infer_request_set_input_tensor_by_index(r, 0, tx3);
    EXPECT(ov_infer_request_infer(r) == GENERAL_ERROR, "3 rows into a 1x3 output must fail");
    EXPECT(strstr(err(), "bigger than allocated") != NULL, "message: %s", lasterr);
    EXPECT(y[0] == y_before, "failed infer left the output untouched");
    /* export / import round trip */
    const char* path = "/tmp/ovdouble_selftest.blob";
    EXPECT(ov_compiled_model_export_model(cm, path) == OK, "export: %s", err());
    FILE* f = fopen(path, "rb");
    static char blob[1 << 16];
    size_t bl = f ? fread(blob, 1, sizeof blob, f) : 0;
    if (f) fclose(f);
    remove(path);
    ov_compiled_model_t* cm2 = NULL;
    EXPECT(ov_core_import_model(core, blob, bl, "CPU", &cm2) == OK, "import: %s", err());
    if (cm2) {
        ov_infer_request_t* r2 = NULL;
        ov_compiled_model_create_infer_request(cm2, &r2);
        float z[6];
        ov_tensor_t* tz = host_tensor(T_F32, 2, (int64_t[]){2, 3}, z);
        ov_infer_request_set_input_tensor_by_index(r2, 0, tx);
        ov_infer_request_set_output_tensor_by_index(r2, 0, tz);
        EXPECT(ov_infer_request_infer(r2) == OK, "infer imported: %s", err());
        EXPECT(z[0] == 6.5f && z[5] == 11, "imported result %g %g", z[0], z[5]);
        ov_tensor_free(tz);
        ov_infer_request_free(r2);
        ov_compiled_model_free(cm2);
    }
    ovdouble_set("version", "2025.2");
    EXPECT(ov_core_import_model(core, blob, bl, "CPU", &cm2) == GENERAL_ERROR, "import from another release must fail");
    EXPECT(strstr(err(), "cannot be imported") != NULL, "message: %s", lasterr);
    ovdouble_set("version", "2025.1");
    EXPECT(ov_core_import_model(core, "garbage", 7, "CPU", &cm2) == GENERAL_ERROR, "garbage blob must fail");
    ov_tensor_free(out);
    ov_tensor_free(tx);
    ov_tensor_free(tx1);
    ov_tensor_free(tx3);
    ov_tensor_free(ty);
    ov_infer_request_free(r);
    ov_compiled_model_free(cm);
}

static void test_versions(void) {
    static const struct {
        const char* v;
        int f32, f16, u8, u4;
        const char* prefix;
    } rel[] = {{"2025.0", 5, 4, 17, 15, "2025.0.0-"}, {"2025.1", 4, 3, 16, 14, "2025.1.0-"},
               {"2026.1", 4, 3, 16, 14, "2026.1"}, {"2024.1", 5, 4, 14, 13, "2024.1.0-"}};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        EXPECT(ovdouble_set("version", rel[i].v) == 0, "set version %s", rel[i].v);
        ov_version_t v;
        EXPECT(ov_get_openvino_version(&v) == OK, "version");
        EXPECT(strncmp(v.buildNumber, rel[i].prefix, strlen(rel[i].prefix)) == 0, "build %s for %s", v.buildNumber, rel[i].v);
        ov_version_free(&v);
        int codes[4] = {rel[i].f32, rel[i].f16, rel[i].u8, rel[i].u4};
        size_t want[4] = {32, 16, 8, 4};
        for (int k = 0; k < 4; k++) {
            ov_shape_t s;
            ov_shape_create(1, (int64_t[]){8}, &s);
            ov_tensor_t* t = NULL;
            EXPECT(ov_tensor_create(codes[k], s, &t) == OK, "tensor type %d", codes[k]);
            size_t bs = 0;
            int et = -1;
            ov_tensor_get_byte_size(t, &bs);
            ov_tensor_get_element_type(t, &et);
            EXPECT(bs == want[k] && et == codes[k], "%s type %d: %zu bytes (want %zu), type back %d", rel[i].v, codes[k], bs, want[k], et);
            ov_tensor_free(t);
            ov_shape_free(&s);
        }
    }
    ovdouble_set("version", "2025.1");
}

static void test_invalid(void) {
    static float w[64];
    static const struct {
        const char* name;
        const char* xml;
        const char* msg;
    } cases[] = {
        {"no precision",
         "<net name=\"n\" version=\"11\"><layers><layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\"><data "
         "shape=\"2\" element_type=\"f32\"/><output><port id=\"0\"/></output></layer><layer id=\"1\" name=\"r\" "
         "type=\"Result\" version=\"opset1\"><input><port id=\"0\"/></input></layer></layers><edges><edge from-layer=\"0\" "
         "from-port=\"0\" to-layer=\"1\" to-port=\"0\"/></edges></net>",
         "missing mandatory attribute: precision"},
        {"edge to a missing port",
         "<net name=\"n\" version=\"11\"><layers><layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\"><data "
         "shape=\"2\" element_type=\"f32\"/><output><port id=\"0\" precision=\"FP32\"/></output></layer><layer id=\"1\" "
         "name=\"r\" type=\"Result\" version=\"opset1\"><input><port id=\"0\"/></input></layer></layers><edges><edge "
         "from-layer=\"0\" from-port=\"0\" to-layer=\"1\" to-port=\"3\"/></edges></net>",
         "has no input port"},
        {"edge from a missing port",
         "<net name=\"n\" version=\"11\"><layers><layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\"><data "
         "shape=\"2\" element_type=\"f32\"/><output><port id=\"0\" precision=\"FP32\"/></output></layer><layer id=\"1\" "
         "name=\"r\" type=\"Result\" version=\"opset1\"><input><port id=\"0\"/></input></layer></layers><edges><edge "
         "from-layer=\"0\" from-port=\"1\" to-layer=\"1\" to-port=\"0\"/></edges></net>",
         "has no output port"},
        {"constant outside the weights",
         "<net name=\"n\" version=\"11\"><layers><layer id=\"0\" name=\"c\" type=\"Const\" version=\"opset1\"><data "
         "element_type=\"f32\" shape=\"16\" offset=\"200\" size=\"64\"/><output><port id=\"0\" precision=\"FP32\"/></output>"
         "</layer><layer id=\"1\" name=\"r\" type=\"Result\" version=\"opset1\"><input><port id=\"0\"/></input></layer>"
         "</layers><edges><edge from-layer=\"0\" from-port=\"0\" to-layer=\"1\" to-port=\"0\"/></edges></net>",
         "Incorrect weights in bin file"},
        {"constant smaller than its shape",
         "<net name=\"n\" version=\"11\"><layers><layer id=\"0\" name=\"c\" type=\"Const\" version=\"opset1\"><data "
         "element_type=\"f32\" shape=\"16\" offset=\"0\" size=\"32\"/><output><port id=\"0\" precision=\"FP32\"/></output>"
         "</layer><layer id=\"1\" name=\"r\" type=\"Result\" version=\"opset1\"><input><port id=\"0\"/></input></layer>"
         "</layers><edges><edge from-layer=\"0\" from-port=\"0\" to-layer=\"1\" to-port=\"0\"/></edges></net>",
         "inconsistent for Constant"},
        {"unknown element type",
         "<net name=\"n\" version=\"11\"><layers><layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\"><data "
         "shape=\"2\" element_type=\"f33\"/><output><port id=\"0\" precision=\"FP32\"/></output></layer><layer id=\"1\" "
         "name=\"r\" type=\"Result\" version=\"opset1\"><input><port id=\"0\"/></input></layer></layers><edges><edge "
         "from-layer=\"0\" from-port=\"0\" to-layer=\"1\" to-port=\"0\"/></edges></net>",
         "Incorrect element type"},
        {"unconnected input",
         "<net name=\"n\" version=\"11\"><layers><layer id=\"1\" name=\"r\" type=\"Result\" version=\"opset1\"><input>"
         "<port id=\"0\"/></input></layer></layers><edges/></net>",
         "is not connected"},
        {"malformed XML", "<net name=\"n\" version=\"11\"><layers><layer id=\"0\"></layers></net>", "malformed"},
        {"IR version 7", "<net name=\"n\" version=\"7\"><layers/><edges/></net>", "IR version 7"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ov_status_e st;
        ov_model_t* m = read(cases[i].xml, w, sizeof w, &st);
        EXPECT(st == GENERAL_ERROR && !m, "%s: accepted (status %d)", cases[i].name, st);
        EXPECT(strstr(err(), cases[i].msg) != NULL, "%s: message '%s' lacks '%s'", cases[i].name, lasterr, cases[i].msg);
        ov_model_free(m);
    }
    /* strict mode: a declared precision that disagrees with inference */
    {
        ir b;
        ir_begin(&b, "strict");
        int x = ir_param(&b, "x", "f32", "2", "FP32");
        ir_result(&b, S(ir_op(&b, "Relu", "opset1", NULL, 1, (src[]){S(x)}, 1, "FP16", NULL)));
        const char* xml = ir_end(&b);
        ov_status_e st;
        int64_t before = ovdouble_stat("warn.precision");
        ov_model_t* m = read(xml, NULL, 0, &st);
        EXPECT(st == OK && ovdouble_stat("warn.precision") == before + 1, "lenient: counted only");
        ov_model_free(m);
        ovdouble_set("strict", "1");
        m = read(xml, NULL, 0, &st);
        EXPECT(st == GENERAL_ERROR && strstr(err(), "declares precision f16"), "strict: %s", lasterr);
        ov_model_free(m);
        ovdouble_set("strict", "0");
    }
    /* graph-level checks, written with the IR writer */
    struct {
        const char* name;
        const char* msg;
    } g[] = {{"mixed element types", "do not have the same element type"},
             {"MatMul inner dimension", "Incompatible MatMul matrix dimension"},
             {"unknown op", "unsupported opset"},
             {"op not in the named opset", "unsupported opset: opset3"},
             {"non-broadcastable shapes", "Argument shapes are inconsistent"},
             {"reshape element count", "incompatible with input shape"},
             {"float shape input", "must be an integral number"}};
    for (int k = 0; k < 7; k++) {
        ir b;
        ir_begin(&b, "bad");
        int x = ir_param(&b, "x", "f32", "2,4", "FP32");
        int last = x;
        if (k == 0) {
            int y = ir_param(&b, "y", "f16", "2,4", "FP16");
            last = ir_op(&b, "Add", "opset1", NULL, 2, (src[]){S(x), S(y)}, 1, "FP32", NULL);
        } else if (k == 1) {
            int c = ir_const(&b, "W", "f32", "3,5", 0, 60, "FP32");
            last = ir_op(&b, "MatMul", "opset1", "transpose_a=\"false\" transpose_b=\"true\"", 2, (src[]){S(x), S(c)}, 1, "FP32", NULL);
        } else if (k == 2) {
            last = ir_op(&b, "Frobnicate", "opset8", NULL, 1, (src[]){S(x)}, 1, "FP32", NULL);
        } else if (k == 3) {
            int i = ir_param(&b, "i", "i64", "1,2", "I64");
            int u = ir_param(&b, "u", "f32", "1", "FP32");
            last = ir_op(&b, "ScatterNDUpdate", "opset3", NULL, 3, (src[]){S(x), S(i), S(u)}, 1, "FP32", NULL);
        } else if (k == 4) {
            int y = ir_param(&b, "y", "f32", "3,4", "FP32");
            last = ir_op(&b, "Multiply", "opset1", NULL, 2, (src[]){S(x), S(y)}, 1, "FP32", NULL);
        } else if (k == 5) {
            int c = ir_const(&b, "shape", "i64", "2", 0, 16, "I64");
            last = ir_op(&b, "Reshape", "opset1", "special_zero=\"false\"", 2, (src[]){S(x), S(c)}, 1, "FP32", NULL);
        } else {
            int c = ir_const(&b, "shape", "f32", "2", 0, 8, "FP32");
            last = ir_op(&b, "Reshape", "opset1", "special_zero=\"false\"", 2, (src[]){S(x), S(c)}, 1, "FP32", NULL);
        }
        ir_result(&b, S(last));
        static int64_t wb[16] = {3, 3};
        ov_status_e st;
        ov_model_t* m = read(ir_end(&b), wb, sizeof wb, &st);
        EXPECT(st == GENERAL_ERROR && !m, "%s: accepted", g[k].name);
        EXPECT(strstr(err(), g[k].msg) != NULL, "%s: message '%s' lacks '%s'", g[k].name, lasterr, g[k].msg);
        ov_model_free(m);
    }
}

static void test_binding(void) {
    ir b;
    ov_status_e st;
    ov_model_t* m = read(matmul_add_ir(&b), blob76, 76, &st);
    ov_compiled_model_t* cm = NULL;
    ov_core_compile_model(core, m, "CPU", 0, &cm);
    ov_infer_request_t* r = NULL;
    ov_compiled_model_create_infer_request(cm, &r);
    uint16_t h[8] = {0};
    float x[15] = {0};
    ov_tensor_t* t16 = host_tensor(T_F16, 2, (int64_t[]){2, 4}, h);
    EXPECT(ov_infer_request_set_input_tensor_by_index(r, 0, t16) == GENERAL_ERROR, "f16 into an f32 port");
    EXPECT(strstr(err(), "element type is not corresponding") && strstr(lasterr, "f16 != f32"), "message: %s", lasterr);
    ov_tensor_t* t35 = host_tensor(T_F32, 2, (int64_t[]){3, 5}, x);
    EXPECT(ov_infer_request_set_input_tensor_by_index(r, 0, t35) == GENERAL_ERROR, "[3,5] into [?,4]");
    EXPECT(strstr(err(), "incompatible") != NULL, "message: %s", lasterr);
    EXPECT(ov_infer_request_set_input_tensor_by_index(r, 1, t35) == OUT_OF_BOUNDS, "index 1 of 1 input");
    EXPECT(ov_infer_request_set_tensor(r, "nope", t35) == NOT_FOUND, "unknown name");
    EXPECT(ov_infer_request_infer(r) == GENERAL_ERROR, "infer with an unset dynamic input");
    /* a caller on the 2025.0 table asks for f32 with 5, which 2025.1 reads as f64 */
    ov_tensor_t* wrong = host_tensor(5, 2, (int64_t[]){2, 4}, x);
    EXPECT(ov_infer_request_set_input_tensor_by_index(r, 0, wrong) == GENERAL_ERROR, "wrong numbering caught");
    EXPECT(strstr(err(), "f64 != f32") != NULL, "message: %s", lasterr);
    /* NPU reports the mismatch at infer, like its copy path */
    ovdouble_set("devices", "CPU,GPU.0,GPU.1,NPU");
    ov_compiled_model_t* cmn = NULL;
    /* the NPU takes static shapes only: x [?,4] is refused, x [2,4] compiles */
    EXPECT(ov_core_compile_model(core, m, "NPU", 0, &cmn) == GENERAL_ERROR, "NPU compiles a dynamic shape");
    EXPECT(strstr(err(), "only models with static shapes") && strstr(lasterr, "[?,4]"), "msg: %s", lasterr);
    ir bs;
    ov_model_t* ms = read(matmul_add_ir_x(&bs, "2,4"), blob76, 76, &st);
    EXPECT(ov_core_compile_model(core, ms, "NPU", 0, &cmn) == OK, "compile NPU: %s", err());
    ov_infer_request_t* rn = NULL;
    ov_compiled_model_create_infer_request(cmn, &rn);
    EXPECT(ov_infer_request_set_input_tensor_by_index(rn, 0, t16) == OK, "NPU accepts at set time");
    EXPECT(ov_infer_request_infer(rn) == GENERAL_ERROR, "NPU infer with f16 input");
    EXPECT(strstr(err(), "Tensor element types are not equal") && strstr(lasterr, "src: f16 != dst: f32"), "msg: %s", lasterr);
    ov_compiled_model_t* cmg = NULL;
    EXPECT(ov_core_compile_model(core, m, "GPU", 0, &cmg) == OK, "GPU resolves to GPU.0: %s", err());
    char* v = NULL;
    EXPECT(ov_compiled_model_get_property(cmg, "EXECUTION_DEVICES", &v) == OK && strcmp(v, "GPU.0") == 0, "exec device %s", v);
    ov_free(v);
    ov_compiled_model_free(cmg);
    EXPECT(ov_core_compile_model(core, m, "HDDL", 0, &cmg) == GENERAL_ERROR, "unknown device");
    EXPECT(strstr(err(), "is not registered") != NULL, "msg: %s", lasterr);
    /* properties through the variadic form */
    EXPECT(ov_core_compile_model(core, m, "CPU", 2, &cmg, "PERFORMANCE_HINT", "LATENCY") == OK, "1 property: %s", err());
    ov_compiled_model_free(cmg);
    EXPECT(ov_core_compile_model(core, m, "CPU", 2, &cmg, "NPU_USE_NPUW", "YES") == GENERAL_ERROR, "NPU key on CPU");
    EXPECT(strstr(err(), "Unsupported property NPU_USE_NPUW by CPU plugin") != NULL, "msg: %s", lasterr);
    EXPECT(ov_core_compile_model(core, ms, "NPU", 4, &cmg, "NPU_USE_NPUW", "YES", "NPUW_FOLD", "YES") == OK, "NPU keys on NPU: %s", err());
    ov_compiled_model_free(cmg);
    EXPECT(ov_core_compile_model(core, m, "CPU", 1, &cmg, "PERFORMANCE_HINT") == INVALID_C_PARAM, "odd property count");
    EXPECT(ov_core_set_property(core, "CPU", "INFERENCE_PRECISION_HINT", "f99") == GENERAL_ERROR, "bad value");
    EXPECT(ov_core_set_property(core, "CPU", "CACHE_DIR", "/tmp/x") == OK, "set CACHE_DIR");
    EXPECT(ov_core_get_property(core, "CPU", "CACHE_DIR", &v) == OK && strcmp(v, "/tmp/x") == 0, "get CACHE_DIR");
    ov_free(v);
    ov_available_devices_t devs;
    EXPECT(ov_core_get_available_devices(core, &devs) == OK && devs.size == 4 && strcmp(devs.devices[3], "NPU") == 0, "devices");
    ov_available_devices_free(&devs);
    ovdouble_set("devices", "CPU");
    ov_infer_request_free(rn);
    ov_compiled_model_free(cmn);
    ov_tensor_free(t16);
    ov_tensor_free(t35);
    ov_tensor_free(wrong);
    ov_infer_request_free(r);
    ov_compiled_model_free(cm);
    ov_model_free(m);
    ov_model_free(ms);
    /* a double free is caught, not executed */
    int64_t bad = ovdouble_stat("bad.free");
    ov_tensor_t* t = host_tensor(T_F32, 1, (int64_t[]){1}, x);
    ov_tensor_free(t);
    ov_tensor_free(t);
    EXPECT(ovdouble_stat("bad.free") == bad + 1, "double free counted");
}

/* u4 weights with u4 zero points and f16 scales (openvino.md 5.4 subgraph) feeding MatMul(x, W^T) */
static void test_decompression(void) {
    enum { N = 2, K = 64, G = 32 };
    static uint8_t blob[1024];
    memset(blob, 0, sizeof blob);
    uint8_t q[N][K];
    uint8_t zp[N][K / G];
    float sc[N][K / G];
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++) q[n][k] = (uint8_t)((n * 7 + k * 3) & 15);
    for (int n = 0; n < N; n++)
        for (int g = 0; g < K / G; g++) {
            zp[n][g] = (uint8_t)(8 + n - g);
            sc[n][g] = 0.25f * (float)(1 + n + g);
        }
    /* weights: element 2k in the low nibble */
    for (int i = 0; i < N * K; i++) blob[i / 2] |= (uint8_t)(q[i / K][i % K] << ((i & 1) * 4));
    for (int i = 0; i < N * K / G; i++) blob[64 + i / 2] |= (uint8_t)(zp[i / (K / G)][i % (K / G)] << ((i & 1) * 4));
    /* f16 scales: these values are exact in f16 */
    for (int i = 0; i < N * K / G; i++) {
        float f = sc[i / (K / G)][i % (K / G)];
        uint32_t u;
        memcpy(&u, &f, 4);
        uint16_t h = (uint16_t)(((u >> 16) & 0x8000) | ((((u >> 23) & 255) - 112) << 10) | ((u >> 13) & 1023));
        memcpy(blob + 128 + 2 * i, &h, 2);
    }
    int64_t shape2[2] = {N, K};
    memcpy(blob + 192, shape2, 16);
    ir b;
    ir_begin(&b, "decompress");
    int x = ir_param(&b, "x", "f32", "?,64", "FP32");
    int cw = ir_const(&b, "w", "u4", "2, 2, 32", 0, 64, "U4");
    int cvw = ir_op(&b, "Convert", "opset1", "destination_type=\"f16\"", 1, (src[]){S(cw)}, 1, "FP16", NULL);
    int cz = ir_const(&b, "zp", "u4", "2, 2, 1", 64, 2, "U4");
    int cvz = ir_op(&b, "Convert", "opset1", "destination_type=\"f16\"", 1, (src[]){S(cz)}, 1, "FP16", NULL);
    int sub = ir_op(&b, "Subtract", "opset1", "auto_broadcast=\"numpy\"", 2, (src[]){S(cvw), S(cvz)}, 1, "FP16", NULL);
    int cs = ir_const(&b, "scale", "f16", "2, 2, 1", 128, 8, "FP16");
    int mul = ir_op(&b, "Multiply", "opset1", "auto_broadcast=\"numpy\"", 2, (src[]){S(sub), S(cs)}, 1, "FP16", NULL);
    int csh = ir_const(&b, "shape", "i64", "2", 192, 16, "I64");
    int rs = ir_op(&b, "Reshape", "opset1", "special_zero=\"false\"", 2, (src[]){S(mul), S(csh)}, 1, "FP16", NULL);
    int cvf = ir_op(&b, "Convert", "opset1", "destination_type=\"f32\"", 1, (src[]){S(rs)}, 1, "FP32", NULL);
    int mm = ir_op(&b, "MatMul", "opset1", "transpose_a=\"false\" transpose_b=\"true\"", 2, (src[]){S(x), S(cvf)}, 1, "FP32", "y");
    ir_result(&b, S(mm));
    ov_status_e st;
    ov_model_t* m = read(ir_end(&b), blob, 208, &st);
    EXPECT(st == OK, "read decompression IR: %s", err());
    if (!m) return;
    ov_compiled_model_t* cm = NULL;
    EXPECT(ov_core_compile_model(core, m, "CPU", 0, &cm) == OK, "compile: %s", err());
    ov_infer_request_t* r = NULL;
    ov_compiled_model_create_infer_request(cm, &r);
    float xv[3 * K], y[3 * N];
    for (int i = 0; i < 3 * K; i++) xv[i] = (float)((i * 37) % 11) / 4.0f - 1.0f;
    ov_tensor_t* tx = host_tensor(T_F32, 2, (int64_t[]){3, K}, xv);
    ov_tensor_t* ty = host_tensor(T_F32, 2, (int64_t[]){3, N}, y);
    ov_infer_request_set_input_tensor_by_index(r, 0, tx);
    ov_infer_request_set_output_tensor_by_index(r, 0, ty);
    EXPECT(ov_infer_request_infer(r) == OK, "infer: %s", err());
    for (int row = 0; row < 3; row++)
        for (int n = 0; n < N; n++) {
            double want = 0;
            for (int k = 0; k < K; k++) want += xv[row * K + k] * (q[n][k] - (double)zp[n][k / G]) * sc[n][k / G];
            EXPECT(close_to(y[row * N + n], (float)want, 1e-5f), "y[%d,%d] = %g, want %g", row, n, y[row * N + n], want);
        }
    EXPECT(ovdouble_stat("compile.const_bytes") > 0, "weights folded at compile");
    ov_tensor_free(tx);
    ov_tensor_free(ty);
    ov_infer_request_free(r);
    ov_compiled_model_free(cm);
    ov_model_free(m);
}

/* RMSNorm decomposition + Softmax + Gather + ScatterUpdate (KV write) + Slice/Transpose/Concat in one model */
static void test_ops(void) {
    static uint8_t blob[512];
    memset(blob, 0, sizeof blob);
    int64_t axes_last[1] = {-1}, idx0[1] = {0}, perm[2] = {1, 0}, sl[4] = {1, 3, 1, 1};
    float eps = 1e-5f, two = 2.0f, table[6] = {10, 11, 20, 21, 30, 31};
    memcpy(blob + 0, axes_last, 8);
    memcpy(blob + 8, &eps, 4);
    memcpy(blob + 12, &two, 4);
    memcpy(blob + 16, table, 24);
    memcpy(blob + 40, idx0, 8);
    memcpy(blob + 48, perm, 16);
    memcpy(blob + 64, sl, 32);
    ir b;
    ir_begin(&b, "ops");
    int x = ir_param(&b, "x", "f32", "2,4", "FP32");
    int ids = ir_param(&b, "ids", "i32", "?", "I32");
    int cache = ir_param(&b, "cache", "f32", "4,2", "FP32");
    int upd = ir_param(&b, "upd", "f32", "1,2", "FP32");
    int pos = ir_param(&b, "pos", "i64", "1", "I64");
    int cax = ir_const(&b, "axes", "i64", "1", 0, 8, "I64");
    int ceps = ir_const(&b, "eps", "f32", "", 8, 4, "FP32");
    int ctwo = ir_const(&b, "two", "f32", "", 12, 4, "FP32");
    int sq = ir_op(&b, "Power", "opset1", NULL, 2, (src[]){S(x), S(ctwo)}, 1, "FP32", NULL);
    int mean = ir_op(&b, "ReduceMean", "opset1", "keep_dims=\"true\"", 2, (src[]){S(sq), S(cax)}, 1, "FP32", NULL);
    int ad = ir_op(&b, "Add", "opset1", NULL, 2, (src[]){S(mean), S(ceps)}, 1, "FP32", NULL);
    int rt = ir_op(&b, "Sqrt", "opset1", NULL, 1, (src[]){S(ad)}, 1, "FP32", NULL);
    int rms = ir_op(&b, "Divide", "opset1", NULL, 2, (src[]){S(x), S(rt)}, 1, "FP32", "rms");
    ir_result(&b, S(rms));
    int sm = ir_op(&b, "Softmax", "opset8", "axis=\"-1\"", 1, (src[]){S(x)}, 1, "FP32", "sm");
    ir_result(&b, S(sm));
    int ctab = ir_const(&b, "table", "f32", "3,2", 16, 24, "FP32");
    int cax0 = ir_const(&b, "axis0", "i64", "", 40, 8, "I64");
    int ga = ir_op(&b, "Gather", "opset8", "batch_dims=\"0\"", 3, (src[]){S(ctab), S(ids), S(cax0)}, 1, "FP32", "emb");
    ir_result(&b, S(ga));
    int sc = ir_op(&b, "ScatterUpdate", "opset3", NULL, 4, (src[]){S(cache), S(pos), S(upd), S(cax0)}, 1, "FP32", "cache_out");
    ir_result(&b, S(sc));
    int cperm = ir_const(&b, "perm", "i64", "2", 48, 16, "I64");
    int cst = ir_const(&b, "start", "i64", "1", 64, 8, "I64");
    int csp = ir_const(&b, "stop", "i64", "1", 72, 8, "I64");
    int cstep = ir_const(&b, "step", "i64", "1", 80, 8, "I64");
    int caxs = ir_const(&b, "saxes", "i64", "1", 88, 8, "I64");
    int sli = ir_op(&b, "Slice", "opset8", NULL, 5, (src[]){S(x), S(cst), S(csp), S(cstep), S(caxs)}, 1, "FP32", NULL);
    int tr = ir_op(&b, "Transpose", "opset1", NULL, 2, (src[]){S(sli), S(cperm)}, 1, "FP32", NULL);
    int cc = ir_op(&b, "Concat", "opset1", "axis=\"0\"", 2, (src[]){S(tr), S(tr)}, 1, "FP32", "cat");
    ir_result(&b, S(cc));
    ov_status_e st;
    ov_model_t* m = read(ir_end(&b), blob, 96, &st);
    EXPECT(st == OK, "read ops IR: %s", err());
    if (!m) return;
    size_t nin = 0, nout = 0;
    ov_model_inputs_size(m, &nin);
    ov_model_outputs_size(m, &nout);
    EXPECT(nin == 5 && nout == 5, "ports %zu/%zu", nin, nout);
    ov_compiled_model_t* cm = NULL;
    EXPECT(ov_core_compile_model(core, m, "CPU", 0, &cm) == OK, "compile: %s", err());
    ov_model_free(m);
    ov_infer_request_t* r = NULL;
    ov_compiled_model_create_infer_request(cm, &r);
    float xv[8] = {1, 2, 3, 4, -1, 0, 1, 2}, cachev[8] = {0}, updv[2] = {7, 8};
    int32_t idv[3] = {2, 0, -1};
    int64_t posv[1] = {2};
    ov_tensor_t* tx = host_tensor(T_F32, 2, (int64_t[]){2, 4}, xv);
    ov_tensor_t* tid = host_tensor(T_I32, 1, (int64_t[]){3}, idv);
    ov_tensor_t* tc = host_tensor(T_F32, 2, (int64_t[]){4, 2}, cachev);
    ov_tensor_t* tu = host_tensor(T_F32, 2, (int64_t[]){1, 2}, updv);
    ov_tensor_t* tp = host_tensor(T_I64, 1, (int64_t[]){1}, posv);
    EXPECT(ov_infer_request_set_tensor(r, "x", tx) == OK && ov_infer_request_set_tensor(r, "ids", tid) == OK &&
               ov_infer_request_set_tensor(r, "cache", tc) == OK && ov_infer_request_set_tensor(r, "upd", tu) == OK &&
               ov_infer_request_set_tensor(r, "pos", tp) == OK,
           "bind by name: %s", err());
    /* the KV result written in place over the cache input, as ggml-openvino binds it */
    EXPECT(ov_infer_request_set_tensor(r, "cache_out", tc) == OK, "bind cache_out: %s", err());
    EXPECT(ov_infer_request_infer(r) == OK, "infer: %s", err());
    ov_tensor_t* o = NULL;
    float* d = NULL;
    ov_infer_request_get_tensor(r, "rms", &o);
    ov_tensor_data(o, (void**)&d);
    for (int row = 0; row < 2; row++) {
        double s = 0;
        for (int k = 0; k < 4; k++) s += xv[row * 4 + k] * xv[row * 4 + k];
        double inv = 1 / sqrt(s / 4 + 1e-5);
        for (int k = 0; k < 4; k++) EXPECT(close_to(d[row * 4 + k], (float)(xv[row * 4 + k] * inv), 1e-6f), "rms[%d,%d]", row, k);
    }
    ov_tensor_free(o);
    ov_infer_request_get_tensor(r, "sm", &o);
    ov_tensor_data(o, (void**)&d);
    double e0 = exp(1 - 4.0), s0 = exp(-3.0) + exp(-2.0) + exp(-1.0) + 1;
    EXPECT(close_to(d[0], (float)(e0 / s0), 1e-6f) && close_to(d[3], (float)(1 / s0), 1e-6f), "softmax %g %g", d[0], d[3]);
    ov_tensor_free(o);
    ov_infer_request_get_tensor(r, "emb", &o);
    ov_tensor_data(o, (void**)&d);
    ov_shape_t es;
    ov_tensor_get_shape(o, &es);
    EXPECT(es.rank == 2 && es.dims[0] == 3 && es.dims[1] == 2, "gather shape");
    ov_shape_free(&es);
    EXPECT(d[0] == 30 && d[1] == 31 && d[2] == 10 && d[4] == 30 && d[5] == 31, "gather (negative index -1 = last row)");
    ov_tensor_free(o);
    EXPECT(cachev[4] == 7 && cachev[5] == 8 && cachev[0] == 0 && cachev[7] == 0, "scatter into the cache in place");
    ov_infer_request_get_tensor(r, "cat", &o);
    ov_tensor_data(o, (void**)&d);
    /* x[:,1:3] = [[2,3],[0,1]] -> transposed [[2,0],[3,1]] -> concatenated twice on axis 0 */
    float want[8] = {2, 0, 3, 1, 2, 0, 3, 1};
    for (int i = 0; i < 8; i++) EXPECT(d[i] == want[i], "cat[%d] = %g want %g", i, d[i], want[i]);
    ov_tensor_free(o);
    ov_tensor_free(tx);
    ov_tensor_free(tid);
    ov_tensor_free(tc);
    ov_tensor_free(tu);
    ov_tensor_free(tp);
    ov_infer_request_free(r);
    ov_compiled_model_free(cm);
}

/* SDPA with a float mask, TopK (ARGSORT-style), Pad reflect, depthwise GroupConvolution (SSM_CONV-style) */
static void test_ops2(void) {
    static uint8_t blob[256];
    memset(blob, 0, sizeof blob);
    int64_t k3[1] = {3}, pbv[2] = {0, 2}, pev[2] = {0, 1};
    float wconv[6] = {1, 0, -1, 0.5f, 0.5f, 0.5f}; /* [G=2, 1, 1, 3] */
    memcpy(blob, k3, 8);
    memcpy(blob + 8, pbv, 16);
    memcpy(blob + 24, pev, 16);
    memcpy(blob + 40, wconv, 24);
    ir b;
    ir_begin(&b, "ops2");
    int q = ir_param(&b, "q", "f32", "1,2,4", "FP32");
    int k = ir_param(&b, "k", "f32", "1,3,4", "FP32");
    int v = ir_param(&b, "v", "f32", "1,3,2", "FP32");
    int mask = ir_param(&b, "mask", "f32", "2,3", "FP32");
    int sd = ir_op(&b, "ScaledDotProductAttention", "opset13", "causal=\"false\"", 4, (src[]){S(q), S(k), S(v), S(mask)}, 1, "FP32", "att");
    ir_result(&b, S(sd));
    int d = ir_param(&b, "d", "f32", "5", "FP32");
    int ck = ir_const(&b, "k3", "i64", "", 0, 8, "I64");
    int tk = ir_op(&b, "TopK", "opset11", "axis=\"0\" mode=\"max\" sort=\"value\" index_element_type=\"i64\" stable=\"true\"", 2, (src[]){S(d), S(ck)}, 2, "FP32", "topv");
    ir_result(&b, S(tk));
    ir_result(&b, (src){tk, 1});
    int p = ir_param(&b, "p", "f32", "2,3", "FP32");
    int cpb = ir_const(&b, "pb", "i64", "2", 8, 16, "I64");
    int cpe = ir_const(&b, "pe", "i64", "2", 24, 16, "I64");
    int pd = ir_op(&b, "Pad", "opset1", "pad_mode=\"reflect\"", 3, (src[]){S(p), S(cpb), S(cpe)}, 1, "FP32", "pad");
    ir_result(&b, S(pd));
    int cx = ir_param(&b, "cx", "f32", "1,2,5", "FP32");
    int cw = ir_const(&b, "cw", "f32", "2,1,1,3", 40, 24, "FP32");
    int gc = ir_op(&b, "GroupConvolution", "opset1", "strides=\"1\" pads_begin=\"0\" pads_end=\"0\" dilations=\"1\" auto_pad=\"explicit\"", 2, (src[]){S(cx), S(cw)}, 1, "FP32", "conv");
    ir_result(&b, S(gc));
    ov_status_e st;
    ov_model_t* m = read(ir_end(&b), blob, 64, &st);
    EXPECT(st == OK, "read ops2: %s", err());
    if (!m) return;
    ov_compiled_model_t* cm = NULL;
    EXPECT(ov_core_compile_model(core, m, "CPU", 0, &cm) == OK, "compile: %s", err());
    ov_model_free(m);
    ov_infer_request_t* r = NULL;
    ov_compiled_model_create_infer_request(cm, &r);
    float qv[8] = {1, 0, 0, 1, 0, 1, 1, 0}, kv[12] = {1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0}, vv[6] = {1, 2, 3, 4, 5, 6};
    float mv[6] = {0, 0, -INFINITY, 0, -1, 0}, dv[5] = {3, 9, 1, 9, 4}, pv[6] = {1, 2, 3, 4, 5, 6};
    float cxv[10] = {1, 2, 3, 4, 5, 10, 20, 30, 40, 50};
    ov_tensor_t* ts[8] = {host_tensor(T_F32, 3, (int64_t[]){1, 2, 4}, qv), host_tensor(T_F32, 3, (int64_t[]){1, 3, 4}, kv),
                          host_tensor(T_F32, 3, (int64_t[]){1, 3, 2}, vv), host_tensor(T_F32, 2, (int64_t[]){2, 3}, mv),
                          host_tensor(T_F32, 1, (int64_t[]){5}, dv),       host_tensor(T_F32, 2, (int64_t[]){2, 3}, pv),
                          host_tensor(T_F32, 3, (int64_t[]){1, 2, 5}, cxv), NULL};
    for (int i = 0; i < 7; i++) EXPECT(ov_infer_request_set_input_tensor_by_index(r, (size_t)i, ts[i]) == OK, "bind %d: %s", i, err());
    EXPECT(ov_infer_request_infer(r) == OK, "infer: %s", err());
    ov_tensor_t* o;
    float* f;
    ov_infer_request_get_tensor(r, "att", &o);
    ov_tensor_data(o, (void**)&f);
    for (int l = 0; l < 2; l++) {
        double w[3], sum = 0, mx = -INFINITY;
        for (int s2 = 0; s2 < 3; s2++) {
            double a = 0;
            for (int e = 0; e < 4; e++) a += qv[l * 4 + e] * kv[s2 * 4 + e];
            w[s2] = a / 2 + mv[l * 3 + s2];
            if (w[s2] > mx) mx = w[s2];
        }
        for (int s2 = 0; s2 < 3; s2++) sum += (w[s2] = exp(w[s2] - mx));
        for (int e = 0; e < 2; e++) {
            double want = 0;
            for (int s2 = 0; s2 < 3; s2++) want += w[s2] / sum * vv[s2 * 2 + e];
            EXPECT(close_to(f[l * 2 + e], (float)want, 1e-6f), "sdpa[%d,%d] = %g want %g", l, e, f[l * 2 + e], want);
        }
    }
    ov_tensor_free(o);
    ov_infer_request_get_output_tensor_by_index(r, 1, &o);
    ov_tensor_data(o, (void**)&f);
    EXPECT(f[0] == 9 && f[1] == 9 && f[2] == 4, "topk values %g %g %g", f[0], f[1], f[2]);
    ov_tensor_free(o);
    int64_t* ix;
    ov_infer_request_get_output_tensor_by_index(r, 2, &o);
    ov_tensor_data(o, (void**)&ix);
    EXPECT(ix[0] == 1 && ix[1] == 3 && ix[2] == 4, "topk indices (stable) %lld %lld %lld", (long long)ix[0], (long long)ix[1], (long long)ix[2]);
    int et = 0;
    ov_tensor_get_element_type(o, &et);
    EXPECT(et == T_I64, "topk index type");
    ov_tensor_free(o);
    ov_infer_request_get_tensor(r, "pad", &o);
    ov_tensor_data(o, (void**)&f);
    /* row [1,2,3] reflect-padded by 2 before and 1 after: [3,2,1,2,3,2] */
    float wp[6] = {3, 2, 1, 2, 3, 2};
    for (int i = 0; i < 6; i++) EXPECT(f[i] == wp[i], "pad[%d] = %g want %g", i, f[i], wp[i]);
    ov_tensor_free(o);
    ov_infer_request_get_tensor(r, "conv", &o);
    ov_tensor_data(o, (void**)&f);
    float wc[6] = {-2, -2, -2, 30, 45, 60};
    for (int i = 0; i < 6; i++) EXPECT(close_to(f[i], wc[i], 1e-6f), "conv[%d] = %g want %g", i, f[i], wc[i]);
    ov_tensor_free(o);
    for (int i = 0; i < 7; i++) ov_tensor_free(ts[i]);
    ov_infer_request_free(r);
    ov_compiled_model_free(cm);
}

/* ReadValue/Assign: a running sum kept in the request; a fresh request starts from the init value */
static void test_state(void) {
    ir b;
    ir_begin(&b, "state");
    int x = ir_param(&b, "x", "f32", "2", "FP32");
    int init = ir_param(&b, "init", "f32", "2", "FP32");
    int rv = ir_op(&b, "ReadValue", "opset6", "variable_id=\"acc\" variable_type=\"f32\" variable_shape=\"2\"", 1, (src[]){S(init)}, 1, "FP32", NULL);
    int add = ir_op(&b, "Add", "opset1", NULL, 2, (src[]){S(rv), S(x)}, 1, "FP32", "sum");
    ir_op(&b, "Assign", "opset6", "variable_id=\"acc\"", 1, (src[]){S(add)}, 0, "FP32", NULL); /* no output port */
    ir_result(&b, S(add));
    ov_status_e st;
    ov_model_t* m = read(ir_end(&b), NULL, 0, &st);
    EXPECT(st == OK, "read state IR: %s", err());
    if (!m) return;
    ov_compiled_model_t* cm = NULL;
    EXPECT(ov_core_compile_model(core, m, "CPU", 0, &cm) == OK, "compile: %s", err());
    ov_model_free(m);
    float xv[2] = {1, 2}, iv[2] = {10, 20}, y[2];
    ov_tensor_t* tx = host_tensor(T_F32, 1, (int64_t[]){2}, xv);
    ov_tensor_t* ti = host_tensor(T_F32, 1, (int64_t[]){2}, iv);
    ov_tensor_t* ty = host_tensor(T_F32, 1, (int64_t[]){2}, y);
    for (int pass = 0; pass < 2; pass++) {
        ov_infer_request_t* r = NULL;
        ov_compiled_model_create_infer_request(cm, &r);
        ov_infer_request_set_input_tensor_by_index(r, 0, tx);
        ov_infer_request_set_input_tensor_by_index(r, 1, ti);
        ov_infer_request_set_output_tensor_by_index(r, 0, ty);
        for (int step = 1; step <= 3; step++) {
            EXPECT(ov_infer_request_infer(r) == OK, "infer: %s", err());
            EXPECT(y[0] == 10 + step && y[1] == 20 + 2 * step, "pass %d step %d: %g %g", pass, step, y[0], y[1]);
        }
        ov_infer_request_free(r);
    }
    ov_tensor_free(tx);
    ov_tensor_free(ti);
    ov_tensor_free(ty);
    ov_compiled_model_free(cm);
}

/* mutated IRs must be rejected or accepted cleanly: never a crash, always a message on failure */
static void test_mutations(void) {
    ir b;
    const char* base = matmul_add_ir(&b);
    size_t n = strlen(base);
    static char buf[1 << 16];
    static const char* tokens[] = {"\"", "<", ">", "/>", "-1", "999999999999999999999", "?", ",", "&amp;", "&#0;",
                                   "opset99", "f16", "i4", "u1", "", " ", "0", "port", "layer"};
    unsigned seed = 12345;
    int rejected = 0, silent = 0;
    for (int it = 0; it < 3000; it++) {
        memcpy(buf, base, n + 1);
        size_t len = n;
        int edits = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 3;
        for (int e = 0; e < edits; e++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            seed = seed * 1103515245u + 12345u;
            const char* tok = tokens[(seed >> 8) % (sizeof tokens / sizeof tokens[0])];
            seed = seed * 1103515245u + 12345u;
            size_t del = (seed >> 8) % 6, tl = strlen(tok);
            if (at + del > len) del = len - at;
            if (len - del + tl >= sizeof buf) continue;
            memmove(buf + at + tl, buf + at + del, len - at - del + 1);
            memcpy(buf + at, tok, tl);
            len = len - del + tl;
        }
        ov_status_e st;
        ov_model_t* m = read(buf, blob76, 76, &st);
        if (st != OK) {
            rejected++;
            const char* msg = ov_get_last_err_msg();
            if (!msg || !*msg) silent++;
            ov_free(msg);
        } else {
            ov_compiled_model_t* cm = NULL;
            if (ov_core_compile_model(core, m, "CPU", 0, &cm) == OK) ov_compiled_model_free(cm);
        }
        ov_model_free(m);
    }
    EXPECT(rejected > 0 && silent == 0, "mutations: %d rejected, %d without a message", rejected, silent);
}

/* MVN, NormalizeL2, ScatterElementsUpdate, BitwiseAnd */
static void test_ops3(void) {
    static uint8_t blob[64];
    int64_t ax1[1] = {1}, zero = 0;
    memcpy(blob, ax1, 8);
    memcpy(blob + 8, &zero, 8);
    ir b;
    ir_begin(&b, "ops3");
    int x = ir_param(&b, "x", "f32", "2,3", "FP32");
    int cax = ir_const(&b, "ax", "i64", "1", 0, 8, "I64");
    int mvn = ir_op(&b, "MVN", "opset6", "normalize_variance=\"true\" eps=\"0\" eps_mode=\"inside_sqrt\"", 2, (src[]){S(x), S(cax)}, 1, "FP32", "mvn");
    ir_result(&b, S(mvn));
    int l2 = ir_op(&b, "NormalizeL2", "opset1", "eps=\"0\" eps_mode=\"add\"", 2, (src[]){S(x), S(cax)}, 1, "FP32", "l2");
    ir_result(&b, S(l2));
    int ix = ir_param(&b, "ix", "i32", "1,3", "I32");
    int up = ir_param(&b, "up", "f32", "1,3", "FP32");
    int c0 = ir_const(&b, "zero", "i64", "", 8, 8, "I64");
    int se = ir_op(&b, "ScatterElementsUpdate", "opset12", "reduction=\"sum\" use_init_val=\"true\"", 4, (src[]){S(x), S(ix), S(up), S(c0)}, 1, "FP32", "se");
    ir_result(&b, S(se));
    int bi = ir_param(&b, "bi", "i32", "2", "I32");
    int ba = ir_op(&b, "BitwiseAnd", "opset13", NULL, 2, (src[]){S(bi), S(bi)}, 1, "I32", "band");
    ir_result(&b, S(ba));
    ov_status_e st;
    ov_model_t* m = read(ir_end(&b), blob, 16, &st);
    EXPECT(st == OK, "read ops3: %s", err());
    if (!m) return;
    ov_compiled_model_t* cm = NULL;
    EXPECT(ov_core_compile_model(core, m, "CPU", 0, &cm) == OK, "compile: %s", err());
    ov_model_free(m);
    ov_infer_request_t* r = NULL;
    ov_compiled_model_create_infer_request(cm, &r);
    float xv[6] = {1, 2, 3, 3, 0, 4}, upv[3] = {10, 20, 30};
    int32_t ixv[3] = {1, 0, 1}, biv[2] = {6, -1};
    ov_tensor_t* ts[4] = {host_tensor(T_F32, 2, (int64_t[]){2, 3}, xv), host_tensor(T_I32, 2, (int64_t[]){1, 3}, ixv),
                          host_tensor(T_F32, 2, (int64_t[]){1, 3}, upv), host_tensor(T_I32, 1, (int64_t[]){2}, biv)};
    for (int i = 0; i < 4; i++) ov_infer_request_set_input_tensor_by_index(r, (size_t)i, ts[i]);
    EXPECT(ov_infer_request_infer(r) == OK, "infer: %s", err());
    ov_tensor_t* o;
    float* f;
    ov_infer_request_get_tensor(r, "mvn", &o);
    ov_tensor_data(o, (void**)&f);
    double sd = sqrt(2.0 / 3);
    EXPECT(close_to(f[0], (float)(-1 / sd), 1e-5f) && close_to(f[1], 0, 1e-5f), "mvn %g %g", f[0], f[1]);
    ov_tensor_free(o);
    ov_infer_request_get_tensor(r, "l2", &o);
    ov_tensor_data(o, (void**)&f);
    EXPECT(close_to(f[3], 0.6f, 1e-6f) && close_to(f[5], 0.8f, 1e-6f), "l2 %g %g", f[3], f[5]);
    ov_tensor_free(o);
    ov_infer_request_get_tensor(r, "se", &o);
    ov_tensor_data(o, (void**)&f);
    /* row 1 col 0 += 10, row 0 col 1 += 20, row 1 col 2 += 30 */
    float want[6] = {1, 22, 3, 13, 0, 34};
    for (int i = 0; i < 6; i++) EXPECT(f[i] == want[i], "se[%d] = %g want %g", i, f[i], want[i]);
    ov_tensor_free(o);
    int32_t* q;
    ov_infer_request_get_tensor(r, "band", &o);
    ov_tensor_data(o, (void**)&q);
    EXPECT(q[0] == 6 && q[1] == -1, "bitwise and %d %d", q[0], q[1]);
    ov_tensor_free(o);
    for (int i = 0; i < 4; i++) ov_tensor_free(ts[i]);
    ov_infer_request_free(r);
    ov_compiled_model_free(cm);
}

/* ---- one-model runner for the op checks below: inputs in Parameter order, outputs copied out ---- */
typedef struct {
    int et;
    int rank;
    int64_t dims[4];
    void* data;
} tin;

static ov_status_e run_graph(const char* xml, void* blob, size_t bsz, int nin, const tin* ins, int nout, void** outs,
                             int64_t (*oshape)[5]) {
    ov_status_e st;
    ov_model_t* m = read(xml, blob, bsz, &st);
    if (!m) return st;
    ov_compiled_model_t* cm = NULL;
    st = ov_core_compile_model(core, m, "CPU", 0, &cm);
    ov_model_free(m);
    if (st != OK) return st;
    ov_infer_request_t* r = NULL;
    ov_compiled_model_create_infer_request(cm, &r);
    ov_tensor_t* ts[16];
    for (int i = 0; i < nin && i < 16; i++) {
        ts[i] = host_tensor(ins[i].et, ins[i].rank, ins[i].dims, ins[i].data);
        if (st == OK) st = ov_infer_request_set_input_tensor_by_index(r, (size_t)i, ts[i]);
    }
    if (st == OK) st = ov_infer_request_infer(r);
    for (int j = 0; j < nout && st == OK; j++) {
        ov_tensor_t* o = NULL;
        ov_infer_request_get_output_tensor_by_index(r, (size_t)j, &o);
        void* d;
        size_t bs;
        ov_tensor_data(o, &d);
        ov_tensor_get_byte_size(o, &bs);
        memcpy(outs[j], d, bs);
        if (oshape) {
            ov_shape_t sh;
            ov_tensor_get_shape(o, &sh);
            oshape[j][0] = sh.rank;
            for (int k = 0; k < sh.rank && k < 4; k++) oshape[j][k + 1] = sh.dims[k];
            ov_shape_free(&sh);
        }
        ov_tensor_free(o);
    }
    for (int i = 0; i < nin && i < 16; i++) ov_tensor_free(ts[i]);
    ov_infer_request_free(r);
    ov_compiled_model_free(cm);
    return st;
}

static bool shape_is(const int64_t* s, int rank, int64_t a, int64_t b, int64_t c) {
    int64_t w[3] = {a, b, c};
    if (s[0] != rank) return false;
    for (int i = 0; i < rank; i++)
        if (s[i + 1] != w[i]) return false;
    return true;
}

static void fill(float* f, int n, float k) {
    for (int i = 0; i < n; i++) f[i] = (float)((i * 7 + 3) % 11) * k - 1;
}

static void test_ops4(void) {
    ir b;
    int64_t os[4][5];
    /* MatMul: batch broadcast [2,2,3] x [1,4,3]^T -> [2,2,4]; transpose_a [3,2]^T x [3,2] -> [2,2]; 1-D [3] x [3,2] -> [2] */
    {
        float A[12], B[12], C[16], A2[6], B2[6], C2[4], a1[3] = {1, 2, 3}, c1[2];
        fill(A, 12, 0.5f);
        fill(B, 12, 0.25f);
        fill(A2, 6, 1);
        fill(B2, 6, 2);
        ir_begin(&b, "mm");
        int a = ir_param(&b, "a", "f32", "2,2,3", "FP32"), bb = ir_param(&b, "b", "f32", "1,4,3", "FP32");
        ir_result(&b, S(ir_op(&b, "MatMul", "opset1", "transpose_b=\"true\"", 2, (src[]){S(a), S(bb)}, 1, "FP32", NULL)));
        int a2 = ir_param(&b, "a2", "f32", "3,2", "FP32"), b2 = ir_param(&b, "b2", "f32", "3,2", "FP32");
        ir_result(&b, S(ir_op(&b, "MatMul", "opset1", "transpose_a=\"true\"", 2, (src[]){S(a2), S(b2)}, 1, "FP32", NULL)));
        int v = ir_param(&b, "v", "f32", "3", "FP32");
        ir_result(&b, S(ir_op(&b, "MatMul", "opset1", NULL, 2, (src[]){S(v), S(b2)}, 1, "FP32", NULL)));
        tin in[5] = {{T_F32, 3, {2, 2, 3}, A}, {T_F32, 3, {1, 4, 3}, B}, {T_F32, 2, {3, 2}, A2}, {T_F32, 2, {3, 2}, B2}, {T_F32, 1, {3}, a1}};
        void* out[3] = {C, C2, c1};
        EXPECT(run_graph(ir_end(&b), NULL, 0, 5, in, 3, out, os) == OK, "matmul graph: %s", err());
        EXPECT(shape_is(os[0], 3, 2, 2, 4) && shape_is(os[1], 2, 2, 2, 0) && shape_is(os[2], 1, 2, 0, 0), "matmul shapes");
        for (int bt = 0; bt < 2; bt++)
            for (int m = 0; m < 2; m++)
                for (int n = 0; n < 4; n++) {
                    double w = 0;
                    for (int k = 0; k < 3; k++) w += A[(bt * 2 + m) * 3 + k] * B[n * 3 + k];
                    EXPECT(close_to(C[(bt * 2 + m) * 4 + n], (float)w, 1e-6f), "bmm[%d,%d,%d]", bt, m, n);
                }
        for (int m = 0; m < 2; m++)
            for (int n = 0; n < 2; n++) {
                double w = 0;
                for (int k = 0; k < 3; k++) w += A2[k * 2 + m] * B2[k * 2 + n];
                EXPECT(close_to(C2[m * 2 + n], (float)w, 1e-6f), "mm_ta[%d,%d]", m, n);
            }
        for (int n = 0; n < 2; n++) EXPECT(close_to(c1[n], a1[0] * B2[n] + a1[1] * B2[2 + n] + a1[2] * B2[4 + n], 1e-6f), "mm_1d[%d]", n);
    }
    /* Broadcast bidirectional [3,1] with [2,1,4] -> [2,3,4]; explicit [3] into [2,3] on axis 1 */
    {
        static uint8_t blob[64];
        int64_t t1[3] = {2, 1, 4}, t2[2] = {2, 3}, am[1] = {1};
        memcpy(blob, t1, 24);
        memcpy(blob + 24, t2, 16);
        memcpy(blob + 40, am, 8);
        float d[3] = {1, 2, 3}, o1[24], o2[6];
        ir_begin(&b, "bc");
        int x = ir_param(&b, "x", "f32", "3,1", "FP32"), y = ir_param(&b, "y", "f32", "3", "FP32");
        int c1 = ir_const(&b, "t1", "i64", "3", 0, 24, "I64"), c2 = ir_const(&b, "t2", "i64", "2", 24, 16, "I64");
        int c3 = ir_const(&b, "am", "i64", "1", 40, 8, "I64");
        ir_result(&b, S(ir_op(&b, "Broadcast", "opset3", "mode=\"bidirectional\"", 2, (src[]){S(x), S(c1)}, 1, "FP32", NULL)));
        ir_result(&b, S(ir_op(&b, "Broadcast", "opset3", "mode=\"explicit\"", 3, (src[]){S(y), S(c2), S(c3)}, 1, "FP32", NULL)));
        tin in[2] = {{T_F32, 2, {3, 1}, d}, {T_F32, 1, {3}, d}};
        void* out[2] = {o1, o2};
        EXPECT(run_graph(ir_end(&b), blob, 48, 2, in, 2, out, os) == OK, "broadcast graph: %s", err());
        EXPECT(shape_is(os[0], 3, 2, 3, 4) && shape_is(os[1], 2, 2, 3, 0), "broadcast shapes");
        EXPECT(o1[0] == 1 && o1[4] == 2 && o1[11] == 3 && o1[12] == 1 && o1[23] == 3, "bidirectional values");
        EXPECT(o2[0] == 1 && o2[2] == 3 && o2[3] == 1 && o2[5] == 3, "explicit values");
    }
    /* StridedSlice, Tile, VariadicSplit, Range, Squeeze/Unsqueeze, ShapeOf */
    {
        static uint8_t blob[256];
        int64_t beg[2] = {1, 0}, end[2] = {3, 0}, str[2] = {1, 2}, rep[2] = {2, 3}, ax1 = 1, lens[2] = {2, -1}, sq[2] = {0, -1};
        float r0 = 1, r1 = 7, r2 = 2;
        memcpy(blob, beg, 16);
        memcpy(blob + 16, end, 16);
        memcpy(blob + 32, str, 16);
        memcpy(blob + 48, rep, 16);
        memcpy(blob + 64, &ax1, 8);
        memcpy(blob + 72, lens, 16);
        memcpy(blob + 88, &r0, 4);
        memcpy(blob + 92, &r1, 4);
        memcpy(blob + 96, &r2, 4);
        memcpy(blob + 104, sq, 16);
        float x[20], t[2] = {5, 6}, o_ss[6], o_ss2[5], o_tile[12], o_s1[8], o_s2[12], o_r[3], o_u[3];
        int64_t o_shape[3];
        for (int i = 0; i < 20; i++) x[i] = (float)i;
        ir_begin(&b, "misc");
        int px = ir_param(&b, "x", "f32", "4,5", "FP32"), pt = ir_param(&b, "t", "f32", "2,1", "FP32");
        int cb = ir_const(&b, "b", "i64", "2", 0, 16, "I64"), ce = ir_const(&b, "e", "i64", "2", 16, 16, "I64");
        int cs = ir_const(&b, "s", "i64", "2", 32, 16, "I64"), cr = ir_const(&b, "r", "i64", "2", 48, 16, "I64");
        int ca = ir_const(&b, "a", "i64", "", 64, 8, "I64"), cl = ir_const(&b, "l", "i64", "2", 72, 16, "I64");
        int f0 = ir_const(&b, "r0", "f32", "", 88, 4, "FP32"), f1 = ir_const(&b, "r1", "f32", "", 92, 4, "FP32");
        int f2 = ir_const(&b, "r2", "f32", "", 96, 4, "FP32"), cq = ir_const(&b, "q", "i64", "2", 104, 16, "I64");
        ir_result(&b, S(ir_op(&b, "StridedSlice", "opset1", "begin_mask=\"0,0\" end_mask=\"0,1\"", 4, (src[]){S(px), S(cb), S(ce), S(cs)}, 1, "FP32", NULL)));
        ir_result(&b, S(ir_op(&b, "StridedSlice", "opset1", "begin_mask=\"0,1\" end_mask=\"0,1\" shrink_axis_mask=\"1,0\"", 3, (src[]){S(px), S(cb), S(ce)}, 1, "FP32", NULL)));
        ir_result(&b, S(ir_op(&b, "Tile", "opset1", NULL, 2, (src[]){S(pt), S(cr)}, 1, "FP32", NULL)));
        int vs = ir_op(&b, "VariadicSplit", "opset1", NULL, 3, (src[]){S(px), S(ca), S(cl)}, 2, "FP32", NULL);
        int s1 = ir_op(&b, "StridedSlice", "opset1", "begin_mask=\"1,1\" end_mask=\"0,1\"", 3, (src[]){S(vs), S(cb), S(cb)}, 1, "FP32", NULL);
        (void)s1;
        ir_result(&b, (src){vs, 0});
        ir_result(&b, (src){vs, 1});
        ir_result(&b, S(ir_op(&b, "Range", "opset4", "output_type=\"f32\"", 3, (src[]){S(f0), S(f1), S(f2)}, 1, "FP32", NULL)));
        int sqz = ir_op(&b, "Squeeze", "opset1", NULL, 1, (src[]){S(pt)}, 1, "FP32", NULL);
        int uns = ir_op(&b, "Unsqueeze", "opset1", NULL, 2, (src[]){S(sqz), S(cq)}, 1, "FP32", NULL);
        ir_result(&b, S(ir_op(&b, "ShapeOf", "opset3", "output_type=\"i64\"", 1, (src[]){S(uns)}, 1, "I64", NULL)));
        ir_result(&b, S(uns));
        tin in[2] = {{T_F32, 2, {4, 5}, x}, {T_F32, 2, {2, 1}, t}};
        void* out[8] = {o_ss, o_ss2, o_tile, o_s1, o_s2, o_r, o_shape, o_u};
        static int64_t oss[8][5];
        EXPECT(run_graph(ir_end(&b), blob, 120, 2, in, 8, out, oss) == OK, "misc graph: %s", err());
        EXPECT(shape_is(oss[0], 2, 2, 3, 0), "strided slice shape");
        float w_ss[6] = {5, 7, 9, 10, 12, 14};
        for (int i = 0; i < 6; i++) EXPECT(o_ss[i] == w_ss[i], "ss[%d] = %g", i, o_ss[i]);
        EXPECT(shape_is(oss[1], 1, 5, 0, 0) && o_ss2[0] == 5 && o_ss2[4] == 9, "shrink row 1: %g %g", o_ss2[0], o_ss2[4]);
        EXPECT(shape_is(oss[2], 2, 4, 3, 0) && o_tile[0] == 5 && o_tile[3] == 6 && o_tile[6] == 5 && o_tile[11] == 6, "tile");
        EXPECT(shape_is(oss[3], 2, 4, 2, 0) && shape_is(oss[4], 2, 4, 3, 0), "variadic split shapes");
        EXPECT(o_s1[0] == 0 && o_s1[1] == 1 && o_s1[2] == 5 && o_s2[0] == 2 && o_s2[5] == 9, "variadic split values");
        EXPECT(shape_is(oss[5], 1, 3, 0, 0) && o_r[0] == 1 && o_r[1] == 3 && o_r[2] == 5, "range");
        EXPECT(o_shape[0] == 1 && o_shape[1] == 2 && o_shape[2] == 1, "shapeof(unsqueeze(squeeze)) = %lld %lld %lld",
               (long long)o_shape[0], (long long)o_shape[1], (long long)o_shape[2]);
        EXPECT(shape_is(oss[7], 3, 1, 2, 1), "unsqueeze shape");
    }
    /* Convert: truncation and saturation to i8/u8, f16 rounding at the boundary */
    {
        float x[4] = {-1.7f, 2.5f, 300, -300}, h[2] = {0.1f, 65504};
        int8_t o8[4];
        uint8_t ou[4];
        uint16_t o16[2];
        ir_begin(&b, "cvt");
        int px = ir_param(&b, "x", "f32", "4", "FP32"), ph = ir_param(&b, "h", "f32", "2", "FP32");
        ir_result(&b, S(ir_op(&b, "Convert", "opset1", "destination_type=\"i8\"", 1, (src[]){S(px)}, 1, "I8", NULL)));
        ir_result(&b, S(ir_op(&b, "Convert", "opset1", "destination_type=\"u8\"", 1, (src[]){S(px)}, 1, "U8", NULL)));
        ir_result(&b, S(ir_op(&b, "Convert", "opset1", "destination_type=\"f16\"", 1, (src[]){S(ph)}, 1, "FP16", NULL)));
        tin in[2] = {{T_F32, 1, {4}, x}, {T_F32, 1, {2}, h}};
        void* out[3] = {o8, ou, o16};
        EXPECT(run_graph(ir_end(&b), NULL, 0, 2, in, 3, out, NULL) == OK, "convert graph: %s", err());
        EXPECT(o8[0] == -1 && o8[1] == 2 && o8[2] == 127 && o8[3] == -128, "f32->i8 %d %d %d %d", o8[0], o8[1], o8[2], o8[3]);
        EXPECT(ou[0] == 0 && ou[1] == 2 && ou[2] == 255 && ou[3] == 0, "f32->u8 %d %d %d %d", ou[0], ou[1], ou[2], ou[3]);
        EXPECT(o16[0] == 0x2e66 && o16[1] == 0x7bff, "f32->f16 %04x %04x", o16[0], o16[1]);
    }
    /* ReduceMax over axes {0,2}, Select with broadcast, Gather batch_dims=1, ScatterNDUpdate, CumSum, Softmax axis 0 */
    {
        static uint8_t blob[128];
        int64_t axes[2] = {0, 2}, one = 1, zero = 0;
        memcpy(blob, axes, 16);
        memcpy(blob + 16, &one, 8);
        memcpy(blob + 24, &zero, 8);
        float x[12], th[3] = {10, 20, 30}, el = -5, o_red[2], o_sel[6], o_g[8], o_sc[6], o_cs[3], o_sm[6];
        uint8_t cond[2] = {1, 0};
        float gd[12];
        int64_t gi[4] = {2, 0, 1, 1}, si[2] = {2, 0};
        float su[4] = {7, 8, 9, 10}, sd[6] = {0}, cs[3] = {1, 2, 3};
        fill(x, 12, 1);
        for (int i = 0; i < 12; i++) gd[i] = (float)i;
        ir_begin(&b, "misc2");
        int px = ir_param(&b, "x", "f32", "2,2,3", "FP32"), pc = ir_param(&b, "c", "boolean", "2,1", "BOOL");
        int pt = ir_param(&b, "th", "f32", "1,3", "FP32"), pe = ir_param(&b, "el", "f32", "", "FP32");
        int pgd = ir_param(&b, "gd", "f32", "2,3,2", "FP32"), pgi = ir_param(&b, "gi", "i64", "2,2", "I64");
        int psd = ir_param(&b, "sd", "f32", "3,2", "FP32"), psi = ir_param(&b, "si", "i64", "2,1", "I64");
        int psu = ir_param(&b, "su", "f32", "2,2", "FP32"), pcs = ir_param(&b, "cs", "f32", "3", "FP32");
        int ca = ir_const(&b, "axes", "i64", "2", 0, 16, "I64"), c1 = ir_const(&b, "one", "i64", "", 16, 8, "I64");
        int c0 = ir_const(&b, "zero", "i64", "", 24, 8, "I64");
        ir_result(&b, S(ir_op(&b, "ReduceMax", "opset1", "keep_dims=\"false\"", 2, (src[]){S(px), S(ca)}, 1, "FP32", NULL)));
        ir_result(&b, S(ir_op(&b, "Select", "opset1", NULL, 3, (src[]){S(pc), S(pt), S(pe)}, 1, "FP32", NULL)));
        ir_result(&b, S(ir_op(&b, "Gather", "opset8", "batch_dims=\"1\"", 3, (src[]){S(pgd), S(pgi), S(c1)}, 1, "FP32", NULL)));
        ir_result(&b, S(ir_op(&b, "ScatterNDUpdate", "opset4", NULL, 3, (src[]){S(psd), S(psi), S(psu)}, 1, "FP32", NULL)));
        ir_result(&b, S(ir_op(&b, "CumSum", "opset3", "exclusive=\"true\" reverse=\"true\"", 2, (src[]){S(pcs), S(c0)}, 1, "FP32", NULL)));
        ir_result(&b, S(ir_op(&b, "Softmax", "opset8", "axis=\"0\"", 1, (src[]){S(psd)}, 1, "FP32", NULL)));
        tin in[10] = {{T_F32, 3, {2, 2, 3}, x}, {T_BOOL, 2, {2, 1}, cond}, {T_F32, 2, {1, 3}, th}, {T_F32, 0, {0}, &el},
                      {T_F32, 3, {2, 3, 2}, gd}, {T_I64, 2, {2, 2}, gi}, {T_F32, 2, {3, 2}, sd}, {T_I64, 2, {2, 1}, si},
                      {T_F32, 2, {2, 2}, su}, {T_F32, 1, {3}, cs}};
        void* out[6] = {o_red, o_sel, o_g, o_sc, o_cs, o_sm};
        static int64_t oss[6][5];
        EXPECT(run_graph(ir_end(&b), blob, 32, 10, in, 6, out, oss) == OK, "misc2 graph: %s", err());
        for (int j = 0; j < 2; j++) {
            float w = -INFINITY;
            for (int i0 = 0; i0 < 2; i0++)
                for (int k = 0; k < 3; k++) w = fmaxf(w, x[(i0 * 2 + j) * 3 + k]);
            EXPECT(shape_is(oss[0], 1, 2, 0, 0) && o_red[j] == w, "reduce max[%d] %g want %g", j, o_red[j], w);
        }
        EXPECT(shape_is(oss[1], 2, 2, 3, 0) && o_sel[0] == 10 && o_sel[2] == 30 && o_sel[3] == -5 && o_sel[5] == -5, "select");
        /* batch 0 takes rows 2,0 of gd[0]; batch 1 rows 1,1 of gd[1] */
        float wg[8] = {4, 5, 0, 1, 8, 9, 8, 9};
        EXPECT(shape_is(oss[2], 3, 2, 2, 2), "gather batch_dims shape");
        for (int i = 0; i < 8; i++) EXPECT(o_g[i] == wg[i], "gather bd[%d] = %g want %g", i, o_g[i], wg[i]);
        float wsc[6] = {9, 10, 0, 0, 7, 8};
        for (int i = 0; i < 6; i++) EXPECT(o_sc[i] == wsc[i], "scatternd[%d] = %g", i, o_sc[i]);
        EXPECT(o_cs[0] == 5 && o_cs[1] == 3 && o_cs[2] == 0, "cumsum exclusive reverse %g %g %g", o_cs[0], o_cs[1], o_cs[2]);
        EXPECT(close_to(o_sm[0], 1.0f / 3, 1e-6f) && close_to(o_sm[5], 1.0f / 3, 1e-6f), "softmax axis 0 of zeros");
    }
    /* Gelu tanh, Swish with beta, Clamp, comparisons, integer floor division */
    {
        float x[4] = {-2, -0.5f, 0.5f, 3}, beta = 2, o_g[4], o_s[4], o_c[4];
        uint8_t o_lt[4];
        int32_t ia[4] = {7, -7, 7, -7}, ib[4] = {2, 2, -2, -2}, o_div[4];
        ir_begin(&b, "un");
        int px = ir_param(&b, "x", "f32", "4", "FP32"), pb = ir_param(&b, "beta", "f32", "", "FP32");
        int pa = ir_param(&b, "ia", "i32", "4", "I32"), pib = ir_param(&b, "ib", "i32", "4", "I32");
        ir_result(&b, S(ir_op(&b, "Gelu", "opset7", "approximation_mode=\"tanh\"", 1, (src[]){S(px)}, 1, "FP32", NULL)));
        ir_result(&b, S(ir_op(&b, "Swish", "opset4", NULL, 2, (src[]){S(px), S(pb)}, 1, "FP32", NULL)));
        ir_result(&b, S(ir_op(&b, "Clamp", "opset1", "min=\"-1\" max=\"1.5\"", 1, (src[]){S(px)}, 1, "FP32", NULL)));
        ir_result(&b, S(ir_op(&b, "Less", "opset1", NULL, 2, (src[]){S(px), S(px)}, 1, "BOOL", NULL)));
        ir_result(&b, S(ir_op(&b, "Divide", "opset1", NULL, 2, (src[]){S(pa), S(pib)}, 1, "I32", NULL)));
        tin in[4] = {{T_F32, 1, {4}, x}, {T_F32, 0, {0}, &beta}, {T_I32, 1, {4}, ia}, {T_I32, 1, {4}, ib}};
        void* out[5] = {o_g, o_s, o_c, o_lt, o_div};
        EXPECT(run_graph(ir_end(&b), NULL, 0, 4, in, 5, out, NULL) == OK, "unary graph: %s", err());
        for (int i = 0; i < 4; i++) {
            double v = x[i], g = 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
            EXPECT(close_to(o_g[i], (float)g, 1e-6f), "gelu tanh[%d]", i);
            EXPECT(close_to(o_s[i], (float)(v / (1 + exp(-2 * v))), 1e-6f), "swish beta[%d]", i);
            EXPECT(o_c[i] == fminf(fmaxf(x[i], -1), 1.5f), "clamp[%d]", i);
            EXPECT(o_lt[i] == 0, "less[%d]", i);
        }
        EXPECT(o_div[0] == 3 && o_div[1] == -4 && o_div[2] == -4 && o_div[3] == 3, "python floor division %d %d %d %d",
               o_div[0], o_div[1], o_div[2], o_div[3]);
    }
}

#ifdef OVD_WITH_PROPS
/* the 2026.4-style property arrays ([inferred] forms, built with --with-props) */
static void test_props(void) {
    ir b;
    ov_status_e st;
    ov_model_t* m = read(matmul_add_ir(&b), blob76, 76, &st);
    ov_property_t p[2] = {{"PERFORMANCE_HINT", "LATENCY"}, {"INFERENCE_PRECISION_HINT", "f32"}};
    ov_compiled_model_t* cm = NULL;
    EXPECT(ov_core_compile_model_props(core, m, "CPU", 2, p, &cm) == OK, "compile_model_props: %s", err());
    char* v = NULL;
    EXPECT(ov_compiled_model_get_property(cm, "PERFORMANCE_HINT", &v) == OK && strcmp(v, "LATENCY") == 0, "read back");
    ov_free(v);
    ov_compiled_model_free(cm);
    ov_property_t bad[1] = {{"NPUW_FOLD", "YES"}};
    EXPECT(ov_core_compile_model_props(core, m, "CPU", 1, bad, &cm) == GENERAL_ERROR, "NPU key on CPU via _props");
    ov_property_t nul[1] = {{"PERFORMANCE_HINT", NULL}};
    EXPECT(ov_core_compile_model_props(core, m, "CPU", 1, nul, &cm) == INVALID_C_PARAM, "NULL value");
    EXPECT(ov_core_set_properties(core, "CPU", 1, p) == OK, "set_properties: %s", err());
    ov_model_free(m);
}
#endif

/* GPU remote context: default context, USM host tensor as an input, device tensors not host-visible */
static void test_remote(void) {
    ovdouble_set("devices", "CPU,GPU");
    ov_remote_context_t* ctx = NULL;
    EXPECT(ov_core_get_default_context(core, "CPU", &ctx) == GENERAL_ERROR && strstr(err(), "not supported by CPU plugin"),
           "no CPU remote context");
    EXPECT(ov_core_get_default_context(core, "GPU", &ctx) == OK, "GPU default context: %s", err());
    if (!ctx) return;
    ir b;
    ov_status_e st;
    ov_model_t* m = read(matmul_add_ir(&b), blob76, 76, &st);
    ov_compiled_model_t* cm = NULL;
    EXPECT(ov_core_compile_model_with_context(core, m, ctx, 0, &cm) == OK, "compile with context: %s", err());
    ov_model_free(m);
    ov_shape_t s;
    ov_shape_create(2, (int64_t[]){1, 4}, &s);
    ov_tensor_t* th = NULL;
    EXPECT(ov_remote_context_create_host_tensor(ctx, T_F32, s, &th) == OK, "host tensor: %s", err());
    float* d = NULL;
    EXPECT(ov_tensor_data(th, (void**)&d) == OK && d, "host tensor data");
    for (int i = 0; i < 4; i++) d[i] = 1;
    ov_tensor_t* tdev = NULL;
    EXPECT(ov_remote_context_create_tensor(ctx, T_F32, s, 2, &tdev, "SHARED_MEM_TYPE", "USM_DEVICE_BUFFER") == OK, "device tensor: %s", err());
    void* dd = NULL;
    EXPECT(ov_tensor_data(tdev, &dd) == GENERAL_ERROR, "device tensor data() fails");
    size_t np = 0;
    char* params = NULL;
    EXPECT(ov_remote_tensor_get_params(tdev, &np, &params) == OK && strstr(params, "USM_DEVICE_BUFFER"), "params %s", params);
    ov_free(params);
    ov_infer_request_t* r = NULL;
    ov_compiled_model_create_infer_request(cm, &r);
    EXPECT(ov_infer_request_set_input_tensor_by_index(r, 0, th) == OK, "bind USM host tensor");
    EXPECT(ov_infer_request_infer(r) == OK, "infer on GPU: %s", err());
    ov_tensor_t* o = NULL;
    ov_infer_request_get_output_tensor_by_index(r, 0, &o);
    float* y;
    ov_tensor_data(o, (void**)&y);
    EXPECT(y[0] == 6.5f && y[2] == 40, "GPU result %g %g", y[0], y[2]);
    /* transfers: the USM host input and the request's own output copy nothing; a plain host input is uploaded */
    EXPECT(ovdouble_stat("xfer.last.nin") == 1 && ovdouble_stat("xfer.last.in.0") == 0 &&
               ovdouble_stat("xfer.last.out.0") == 0, "USM input: no transfer (%lld)",
           (long long)ovdouble_stat("xfer.last.in.0"));
    float plain[4] = {1, 1, 1, 1};
    ov_tensor_t* tp = NULL;
    ov_tensor_create_from_host_ptr(T_F32, s, plain, &tp);
    int64_t up0 = ovdouble_stat("xfer.h2d");
    EXPECT(ov_infer_request_set_input_tensor_by_index(r, 0, tp) == OK && ov_infer_request_infer(r) == OK, "plain input");
    EXPECT(ovdouble_stat("xfer.last.in.0") == 16 && ovdouble_stat("xfer.h2d") == up0 + 16, "plain input uploaded");
    /* USM_USER_BUFFER: inside a live allocation of the context only; bound and inferred in place */
    ov_tensor_t* tu = NULL;
    EXPECT(ov_remote_context_create_tensor(ctx, T_F32, s, 4, &tu, "SHARED_MEM_TYPE", "USM_USER_BUFFER", "MEM_HANDLE",
                                           (void*)d) == OK, "user buffer over USM host memory: %s", err());
    EXPECT(ov_infer_request_set_input_tensor_by_index(r, 0, tu) == OK && ov_infer_request_infer(r) == OK &&
               ovdouble_stat("xfer.last.in.0") == 0, "user buffer input: %s", err());
    ov_tensor_t* tbad = NULL;
    EXPECT(ov_remote_context_create_tensor(ctx, T_F32, s, 4, &tbad, "SHARED_MEM_TYPE", "USM_USER_BUFFER", "MEM_HANDLE",
                                           (void*)(d + 1)) == GENERAL_ERROR, "user buffer past the allocation");
    EXPECT(ov_remote_context_create_tensor(ctx, T_F32, s, 4, &tbad, "SHARED_MEM_TYPE", "USM_USER_BUFFER", "MEM_HANDLE",
                                           (void*)plain) == GENERAL_ERROR, "host memory as a user buffer");
    ov_remote_context_t* other = NULL;
    EXPECT(ov_core_create_context(core, "GPU", 0, &other) == OK, "created context");
    ov_tensor_t* to = NULL;
    EXPECT(ov_remote_context_create_host_tensor(other, T_F32, s, &to) == OK, "another context's tensor");
    EXPECT(ov_infer_request_set_input_tensor_by_index(r, 0, to) == GENERAL_ERROR, "another context's tensor refused");
    ov_tensor_free(to);
    ov_remote_context_free(other);
    ov_tensor_free(th); /* the allocation the user buffer lies in */
    EXPECT(ov_infer_request_infer(r) == GENERAL_ERROR && strstr(err(), "was freed"), "freed USM memory: %s", err());
    ov_tensor_free(tu);
    ov_tensor_free(tp);
    char* dn = NULL;
    EXPECT(ov_remote_context_get_device_name(ctx, &dn) == OK && strcmp(dn, "GPU") == 0, "context device %s", dn);
    ov_free(dn);
    ov_tensor_free(o);
    ov_tensor_free(tdev);
    ov_shape_free(&s);
    ov_infer_request_free(r);
    ov_compiled_model_free(cm);
    ov_remote_context_free(ctx);
    ovdouble_set("devices", "CPU");
}

/* ExtractImagePatches: 2x2 patches of a 1x2x3x3 image, stride 1, valid */
static void test_eip(void) {
    ir b;
    ir_begin(&b, "eip");
    int x = ir_param(&b, "x", "f32", "1,2,3,3", "FP32");
    ir_result(&b, S(ir_op(&b, "ExtractImagePatches", "opset3", "sizes=\"2,2\" strides=\"1,1\" rates=\"1,1\" auto_pad=\"valid\"", 1, (src[]){S(x)}, 1, "FP32", NULL)));
    float xv[18], o[32];
    for (int i = 0; i < 18; i++) xv[i] = (float)i;
    tin in[1] = {{T_F32, 4, {1, 2, 3, 3}, xv}};
    void* out[1] = {o};
    static int64_t os[1][5];
    EXPECT(run_graph(ir_end(&b), NULL, 0, 1, in, 1, out, os) == OK, "eip: %s", err());
    EXPECT(os[0][0] == 4 && os[0][2] == 8 && os[0][3] == 2 && os[0][4] == 2, "eip shape");
    /* depth d = (i*2 + j)*2 + c; output [1, 8, 2, 2] */
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            for (int c = 0; c < 2; c++)
                for (int y = 0; y < 2; y++)
                    for (int xx = 0; xx < 2; xx++) {
                        int d = (i * 2 + j) * 2 + c;
                        float want = xv[(c * 3 + y + i) * 3 + xx + j];
                        EXPECT(o[(d * 2 + y) * 2 + xx] == want, "eip d%d y%d x%d = %g want %g", d, y, xx, o[(d * 2 + y) * 2 + xx], want);
                    }
}

/* low-precision Constants of the weight extraction: f8e8m0 scales, f4e2m1 (MXFP4) and i4 values, element 2k low */
static void test_lowp(void) {
    static uint8_t blob[16] = {127, 128, 126, 0xff, 0x21, 0xf9, 0x8f, 0x70};
    ir b;
    ir_begin(&b, "lowp");
    int c0 = ir_const(&b, "e8m0", "f8e8m0", "4", 0, 4, "F8E8M0");
    int c1 = ir_const(&b, "e2m1", "f4e2m1", "4", 4, 2, "F4E2M1");
    int c2 = ir_const(&b, "i4", "i4", "4", 6, 2, "I4");
    ir_result(&b, S(ir_op(&b, "Convert", "opset1", "destination_type=\"f32\"", 1, (src[]){S(c0)}, 1, "FP32", NULL)));
    ir_result(&b, S(ir_op(&b, "Convert", "opset1", "destination_type=\"f32\"", 1, (src[]){S(c1)}, 1, "FP32", NULL)));
    ir_result(&b, S(ir_op(&b, "Convert", "opset1", "destination_type=\"f32\"", 1, (src[]){S(c2)}, 1, "FP32", NULL)));
    float a[4], e[4], q[4];
    void* out[3] = {a, e, q};
    EXPECT(run_graph(ir_end(&b), blob, 8, 0, NULL, 3, out, NULL) == OK, "lowp graph: %s", err());
    EXPECT(a[0] == 1 && a[1] == 2 && a[2] == 0.5f && isnan(a[3]), "f8e8m0 %g %g %g %g", a[0], a[1], a[2], a[3]);
    EXPECT(e[0] == 0.5f && e[1] == 1 && e[2] == -0.5f && e[3] == -6, "f4e2m1 %g %g %g %g", e[0], e[1], e[2], e[3]);
    EXPECT(q[0] == -1 && q[1] == -8 && q[2] == 0 && q[3] == 7, "i4 %g %g %g %g", q[0], q[1], q[2], q[3]);
}

static void test_faults(void) {
    ir b;
    ov_status_e st;
    ov_model_t* m = read(matmul_add_ir(&b), blob76, 76, &st);
    ov_compiled_model_t* cm = NULL;
    EXPECT(ovdouble_set("fail", "compile:2") == 0, "set fail");
    EXPECT(ov_core_compile_model(core, m, "CPU", 0, &cm) == OK, "1st compile passes");
    ov_compiled_model_free(cm);
    EXPECT(ov_core_compile_model(core, m, "CPU", 0, &cm) == GENERAL_ERROR, "2nd compile fails");
    EXPECT(strstr(err(), "injected failure at compile (call 2)") != NULL, "msg: %s", lasterr);
    EXPECT(ov_core_compile_model(core, m, "CPU", 0, &cm) == OK, "3rd compile passes");
    ovdouble_set("fail", "infer,alloc:1");
    ov_shape_t s;
    ov_shape_create(1, (int64_t[]){4}, &s);
    ov_tensor_t* t = NULL;
    EXPECT(ov_tensor_create(T_F32, s, &t) == UNKNOW_EXCEPTION, "alloc fault");
    EXPECT(strstr(err(), "bad_alloc") != NULL, "msg: %s", lasterr);
    ov_shape_free(&s);
    ov_infer_request_t* r = NULL;
    ov_compiled_model_create_infer_request(cm, &r);
    float x[4] = {1, 1, 1, 1}, y[3] = {-1, -1, -1};
    ov_tensor_t* tx = host_tensor(T_F32, 2, (int64_t[]){1, 4}, x);
    ov_tensor_t* ty = host_tensor(T_F32, 2, (int64_t[]){1, 3}, y);
    ov_infer_request_set_input_tensor_by_index(r, 0, tx);
    ov_infer_request_set_output_tensor_by_index(r, 0, ty);
    EXPECT(ov_infer_request_infer(r) == GENERAL_ERROR && y[0] == -1, "infer fault leaves the output");
    ovdouble_set("fail", "");
    EXPECT(ov_infer_request_infer(r) == OK && y[0] == 6.5f, "infer after the fault: %s", err());
    EXPECT(ovdouble_set("fail", "bogus") == -2, "unknown fault point rejected");
    EXPECT(ovdouble_set("nope", "1") == -1, "unknown knob rejected");
    EXPECT(ovdouble_stat("calls.ov_infer_request_infer") >= 2, "call counter");
    EXPECT(ovdouble_stat("errors.ov_infer_request_infer") >= 1, "error counter");
    EXPECT(ovdouble_time_ns() > 0, "time inside the double");
    EXPECT(ovdouble_stat("cpu_ns") > 0 && ovdouble_stat("cpu_ns") <= ovdouble_time_ns() + 1000000,
           "CPU time inside the double: %lld (wall %lld)", (long long)ovdouble_stat("cpu_ns"), (long long)ovdouble_time_ns());
    ov_tensor_free(tx);
    ov_tensor_free(ty);
    ov_infer_request_free(r);
    ov_compiled_model_free(cm);
    ov_model_free(m);
}

/* A Split into 100 outputs joined back by one Concat in reverse order: OpenVINO bounds neither count (the double once
 * held a node's ports in fixed arrays of 16 inputs and 64 outputs) */
static void test_wide(void) {
    enum { W = 100 };
    static ir b;
    ir_begin(&b, "wide");
    int x = ir_param(&b, "x", "f32", "1,100", "FP32");
    int ax = ir_const(&b, "axis", "i64", "", 0, 8, "I64");
    int sp = ir_op(&b, "Split", "opset1", "num_splits=\"100\"", 2, (src[]){S(x), S(ax)}, W, "FP32", NULL);
    src parts[W];
    for (int i = 0; i < W; i++) parts[i] = (src){sp, W - 1 - i};
    int cc = ir_op(&b, "Concat", "opset1", "axis=\"1\"", W, parts, 1, "FP32", "rev");
    ir_result(&b, S(cc));
    int64_t one = 1;
    ov_status_e st;
    ov_model_t* m = read(ir_end(&b), &one, sizeof one, &st);
    EXPECT(st == OK, "read wide IR: %s", err());
    if (!m) return;
    ov_compiled_model_t* cm = NULL;
    EXPECT(ov_core_compile_model(core, m, "CPU", 0, &cm) == OK, "compile wide: %s", err());
    ov_model_free(m);
    ov_infer_request_t* r = NULL;
    ov_compiled_model_create_infer_request(cm, &r);
    float xv[W], yv[W] = {0};
    for (int i = 0; i < W; i++) xv[i] = (float)i;
    ov_tensor_t* tx = host_tensor(T_F32, 2, (int64_t[]){1, W}, xv);
    ov_tensor_t* ty = host_tensor(T_F32, 2, (int64_t[]){1, W}, yv);
    EXPECT(ov_infer_request_set_tensor(r, "x", tx) == OK && ov_infer_request_set_tensor(r, "rev", ty) == OK, "bind wide: %s", err());
    EXPECT(ov_infer_request_infer(r) == OK, "infer wide: %s", err());
    int bad = 0;
    for (int i = 0; i < W; i++) bad += yv[i] != (float)(W - 1 - i);
    EXPECT(bad == 0, "wide: %d of %d elements not reversed", bad, W);
    ov_tensor_free(tx);
    ov_tensor_free(ty);
    ov_infer_request_free(r);
    ov_compiled_model_free(cm);
}

/* the double's OpenCL (ovd_ocl.c): declared here from the specifications, as a host program would */
int32_t clGetContextInfo(void*, uint32_t, size_t, void*, size_t*);
int32_t clGetDeviceInfo(void*, uint32_t, size_t, void*, size_t*);
void* clGetExtensionFunctionAddressForPlatform(void*, const char*);
void* clCreateCommandQueueWithProperties(void*, void*, const uint64_t*, int32_t*);
int32_t clFinish(void*);
int32_t clReleaseCommandQueue(void*);
typedef int32_t (*memcpy_fn)(void*, uint32_t, void*, const void*, size_t, uint32_t, const void*, void*);
typedef int32_t (*fill_fn)(void*, void*, const void*, size_t, size_t, uint32_t, const void*, void*);

static void test_opencl(void) {
    ovdouble_set("devices", "CPU,GPU");
    ov_remote_context_t* ctx = NULL;
    EXPECT(ov_core_get_default_context(core, "GPU", &ctx) == OK, "GPU default context: %s", err());
    if (!ctx) return;
    size_t np = 0;
    char* params = NULL;
    void* cl = NULL;
    EXPECT(ov_remote_context_get_params(ctx, &np, &params) == OK &&
               sscanf(params, "CONTEXT_TYPE OCL OCL_CONTEXT %p", &cl) == 1 && !strstr(params, "OCL_QUEUE"),
           "context params %s", params);
    ov_free(params);
    void* dev = NULL;
    void* plat = NULL;
    char ext[256];
    size_t n = 0;
    EXPECT(clGetContextInfo(cl, 0x1081, sizeof dev, &dev, &n) == 0 && dev && n == sizeof dev, "CL_CONTEXT_DEVICES");
    EXPECT(clGetContextInfo(cl, 0x1081, 1, &dev, NULL) == -30, "a value too small: CL_INVALID_VALUE");
    EXPECT(clGetContextInfo(&n, 0x1081, sizeof dev, &dev, NULL) == -34, "not a context: CL_INVALID_CONTEXT");
    EXPECT(clGetDeviceInfo(dev, 0x1030, sizeof ext, ext, NULL) == 0 && strstr(ext, "cl_intel_unified_shared_memory"),
           "extensions");
    EXPECT(clGetDeviceInfo(dev, 0x1031, sizeof plat, &plat, NULL) == 0 && plat, "CL_DEVICE_PLATFORM");
    memcpy_fn cpy = (memcpy_fn)clGetExtensionFunctionAddressForPlatform(plat, "clEnqueueMemcpyINTEL");
    fill_fn fill = (fill_fn)clGetExtensionFunctionAddressForPlatform(plat, "clEnqueueMemFillINTEL");
    EXPECT(cpy && fill && !clGetExtensionFunctionAddressForPlatform(plat, "clNoSuchINTEL"), "extension functions");
    int32_t e = 1;
    void* q = clCreateCommandQueueWithProperties(cl, dev, NULL, &e);
    EXPECT(q && e == 0, "queue: %d", e);
    const uint64_t ooo[] = {0x1093, 1, 0};
    EXPECT(!clCreateCommandQueueWithProperties(cl, dev, ooo, &e) && e == -35, "out of order refused: %d", e);
    if (!q || !cpy || !fill) return;

    ov_shape_t s;
    ov_shape_create(1, (int64_t[]){64}, &s);
    ov_tensor_t* t = NULL;
    EXPECT(ov_remote_context_create_tensor(ctx, T_U8, s, 2, &t, "SHARED_MEM_TYPE", "USM_DEVICE_BUFFER") == OK,
           "device tensor: %s", err());
    unsigned long long h = 0;
    EXPECT(ov_remote_tensor_get_params(t, &np, &params) == OK && sscanf(params, "MEM_HANDLE %llx", &h) == 1 && h,
           "handle %s", params);
    ov_free(params);
    unsigned char in[64], out[64];
    for (int i = 0; i < 64; i++) in[i] = (unsigned char)i;
    memset(out, 0, sizeof out);
    char* d = (char*)(uintptr_t)h;
    EXPECT(cpy(q, 0, out, d, 64, 0, NULL, NULL) == 0 && ovdouble_stat("ocl.pending") == 1 && out[0] == 0, "pending read");
    EXPECT(clFinish(q) == 0 && out[0] == 0xff && out[63] == 0xff, "new device memory reads 0xff");
    EXPECT(cpy(q, 1, d, in, 64, 0, NULL, NULL) == 0 && cpy(q, 1, out, d, 64, 0, NULL, NULL) == 0 &&
               memcmp(in, out, 64) == 0,
           "blocking copies round trip");
    unsigned char pat[4] = {7, 7, 7, 7};
    EXPECT(fill(q, d + 2, pat, 4, 8, 0, NULL, NULL) == -30, "misaligned fill: CL_INVALID_VALUE");
    EXPECT(fill(q, d, pat, 4, 6, 0, NULL, NULL) == -30, "size no multiple of the pattern");
    EXPECT(fill(q, d, pat, 3, 6, 0, NULL, NULL) == -30, "pattern size no power of two");
    EXPECT(fill(q, d + 1, pat, 1, 3, 0, NULL, NULL) == 0 && clFinish(q) == 0, "byte fill");
    EXPECT(cpy(q, 1, out, d, 64, 0, NULL, NULL) == 0 && out[0] == 0 && out[1] == 7 && out[3] == 7 && out[4] == 4, "filled");
    EXPECT(cpy(q, 1, d, d + 8, 16, 0, NULL, NULL) == -8, "overlap: CL_MEM_COPY_OVERLAP");
    EXPECT(cpy(q, 1, out, d + 60, 8, 0, NULL, NULL) == -30, "past the allocation: CL_INVALID_VALUE");
    void* ev = NULL;
    EXPECT(cpy(q, 1, out, d, 8, 0, NULL, &ev) == -59, "events: CL_INVALID_OPERATION");
    EXPECT(cpy(q, 1, out, d, 8, 1, NULL, NULL) == -57, "wait list: CL_INVALID_EVENT_WAIT_LIST");
    ov_remote_context_t* other = NULL;
    ov_tensor_t* to = NULL;
    unsigned long long ho = 0;
    EXPECT(ov_core_create_context(core, "GPU", 0, &other) == OK &&
               ov_remote_context_create_tensor(other, T_U8, s, 2, &to, "SHARED_MEM_TYPE", "USM_DEVICE_BUFFER") == OK &&
               ov_remote_tensor_get_params(to, &np, &params) == OK && sscanf(params, "MEM_HANDLE %llx", &ho) == 1,
           "another context's device memory");
    ov_free(params);
    EXPECT(cpy(q, 1, out, (void*)(uintptr_t)ho, 8, 0, NULL, NULL) == -30, "another context's device memory: CL_INVALID_VALUE");
    ov_tensor_free(to);
    ov_remote_context_free(other);
    ov_tensor_t* th = NULL;
    EXPECT(ov_tensor_create_from_host_ptr(T_U8, s, d, &th) == GENERAL_ERROR && strstr(err(), "cannot address"),
           "host tensor over device memory refused");
    ovdouble_set("ocl", "no_usm");
    EXPECT(!clGetExtensionFunctionAddressForPlatform(plat, "clEnqueueMemcpyINTEL"), "no_usm: no extension function");
    ovdouble_set("ocl", "");
    EXPECT(clReleaseCommandQueue(q) == 0 && clFinish(q) == -36, "released queue: CL_INVALID_COMMAND_QUEUE");
    int64_t live = ovdouble_stat("usm.live");
    ov_tensor_free(t);
    EXPECT(ovdouble_stat("usm.live") == live - 1, "allocation freed");
    ov_shape_free(&s);
    ov_remote_context_free(ctx);
    ovdouble_set("devices", "CPU");
}

int main(void) {
    EXPECT(ov_core_create(&core) == OK, "core");
    test_versions();
    test_matmul_add();
    test_invalid();
    test_binding();
    test_decompression();
    test_ops();
    test_ops2();
    test_state();
    test_ops3();
    test_ops4();
    test_remote();
    test_opencl();
    test_eip();
    test_wide();
    test_lowp();
    test_mutations();
    test_faults();
#ifdef OVD_WITH_PROPS
    test_props();
#endif
    ov_core_free(core);
    static const char* live[] = {"live.core", "live.model", "live.compiled_model", "live.infer_request",
                                 "live.tensor", "live.port", "live.string", "live.shape", "live.context", "live.bytes"};
    for (size_t i = 0; i < sizeof live / sizeof live[0]; i++)
        EXPECT(ovdouble_stat(live[i]) == 0, "%s = %lld at exit", live[i], (long long)ovdouble_stat(live[i]));
    printf("ovdouble selftest: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
