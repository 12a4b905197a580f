import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The bytes the allocator gives `object`'s allocation (glibc's `malloc_usable_size`, which its Swift
/// module does not export), or nil where it is not known. Tests of memory per object compare it with a
/// size class: glibc hands out 16-byte steps, each usable to 8 bytes short of it.
public func allocationUsableSize(of object: AnyObject) -> Int? {
    #if canImport(Glibc)
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_usable_size") else { return nil }
    let usableSize = unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutableRawPointer?) -> Int).self)
    return withExtendedLifetime(object) { usableSize(Unmanaged.passUnretained(object).toOpaque()) }
    #else
    return nil
    #endif
}
