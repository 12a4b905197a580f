// The fault a fetch is making on this thread, for its class's initializer to find (FaultCreation in
// OCDGraph). A C11 thread-local is a few instructions to read or write; the pthread key it replaces
// cost two pthread_setspecific calls of about 60 instructions and a pthread_getspecific per fetched object.

#include "CSwiftRuntime.h"

static _Thread_local void *ocd_pending_fault_value;

void *_Nullable ocd_pending_fault(void) {
    return ocd_pending_fault_value;
}

void ocd_set_pending_fault(void *_Nullable pending) {
    ocd_pending_fault_value = pending;
}
