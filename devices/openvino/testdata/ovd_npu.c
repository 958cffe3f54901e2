/* The NPU plugin's compile-time rule: "Currently, only models with static shapes are supported on NPU" (OpenVINO's
 * NPU device documentation, Limitations). The double refuses, on a device named NPU, a model in which any live
 * layer output (Parameters included) has a dynamic dimension or rank after shape inference. */
#include "ovd.h"

#include <string.h>

int ovd_npu_check(const ovd_graph* g, const char* dev) {
    if (strncmp(dev, "NPU", 3) != 0) return 0;
    for (int i = 0; i < g->nnodes; i++) {
        const ovd_node* n = &g->nodes[i];
        if (!n->live) continue;
        for (int o = 0; o < n->nout; o++) {
            if (ovd_ps_static(&n->out[o].ps)) continue;
            char b[160];
            ovd_ps_str(&n->out[o].ps, b, sizeof b);
            return ovd_err("[NPU] Exception from src/plugins/intel_npu: only models with static shapes are supported; "
                           "layer %s (%s) output %d has the dynamic shape %s", n->name, n->type, o, b);
        }
    }
    return 0;
}
