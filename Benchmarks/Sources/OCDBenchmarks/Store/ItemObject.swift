import OpenCoreDataRuntime

/// Item's class, with exactly the accessors `@Managed var i0: Int64` expands to
/// (`get { managedValue(forKey: "i0") }`, `set { setManagedValue(newValue, forKey: "i0") }`), written out
/// because this package imports OpenCoreDataRuntime, which leaves the macros out (their swift-syntax build
/// takes minutes in release; decision D3). Measured by insert_accessors.
final class ItemObject: NSManagedObject, @unchecked Sendable {
    var i0: Int64 { get { managedValue(forKey: "i0") } set { setManagedValue(newValue, forKey: "i0") } }
    var i1: Int64 { get { managedValue(forKey: "i1") } set { setManagedValue(newValue, forKey: "i1") } }
    var i2: Int64 { get { managedValue(forKey: "i2") } set { setManagedValue(newValue, forKey: "i2") } }
    var i3: Int64 { get { managedValue(forKey: "i3") } set { setManagedValue(newValue, forKey: "i3") } }
    var i4: Int64 { get { managedValue(forKey: "i4") } set { setManagedValue(newValue, forKey: "i4") } }
    var i5: Int64 { get { managedValue(forKey: "i5") } set { setManagedValue(newValue, forKey: "i5") } }
    var i6: Int64 { get { managedValue(forKey: "i6") } set { setManagedValue(newValue, forKey: "i6") } }
    var i7: Int64 { get { managedValue(forKey: "i7") } set { setManagedValue(newValue, forKey: "i7") } }
    var i8: Int64 { get { managedValue(forKey: "i8") } set { setManagedValue(newValue, forKey: "i8") } }
    var i9: Int64 { get { managedValue(forKey: "i9") } set { setManagedValue(newValue, forKey: "i9") } }
}
