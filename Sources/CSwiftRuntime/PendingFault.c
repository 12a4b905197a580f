// The fault a fetch is making on this thread, for its class's initializer to find (FaultCreation in
// OCDGraph). A C11 thread-local is a few instructions to read or write; pthread_getspecific and
// pthread_setspecific, which it replaces, were about 60 each, three calls per fetched object.

#include "CSwiftRuntime.h"

static _Thread_local void *ocd_pending_fault_value;

void *_Nullable ocd_pending_fault(void) {
    return ocd_pending_fault_value;
}

void ocd_set_pending_fault(void *_Nullable pending) {
    ocd_pending_fault_value = pending;
}
