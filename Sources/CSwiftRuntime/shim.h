// Entry points of the Swift runtime (libswiftCore, linked into every Swift program) that the standard
// library does not surface. Declared with their C signatures from the runtime's HeapObject.h.
#ifndef OCD_CSWIFTRUNTIME_H
#define OCD_CSWIFTRUNTIME_H

/// Takes a strong reference to a native Swift object unless its deinitialization has begun: returns the
/// object, or NULL. (A weak reference does the same, at the price of a side table for the object.)
void *_Nullable swift_tryRetain(void *_Nonnull object);

#endif
