import Foundation

extension NSNumber {
    /// The number as a `Decimal`, as `decimalValue` gives it, except that an infinite double gives
    /// Decimal's NaN: Linux Foundation's `decimalValue` stops the process on an infinity (`Decimal(_:)` of
    /// one traps), where Apple's gives NaN.
    package var finiteDecimalValue: Decimal {
        if self is NSDecimalNumber { return decimalValue }
        let kind = objCType.pointee
        // 'd' and 'f': a double or a float, which may be infinite; integers and Booleans never are.
        if kind == 0x64 || kind == 0x66 {
            let double = doubleValue
            return double.isFinite ? decimalValue : .nan
        }
        return decimalValue
    }
}
