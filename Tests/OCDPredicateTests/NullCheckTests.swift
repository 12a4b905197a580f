import Foundation
import Testing
@testable import OCDPredicate

/// `isNSNull` answers as `value is NSNull` does, also for the values it recognises by their type.
@Suite struct NullCheckTests {
    @Test func answersAsTheCastDoes() {
        final class Null: NSNull, @unchecked Sendable {}
        let wrappedNull: NSNull? = NSNull()
        let wrappedNothing: Int? = nil
        let values: [Any] = [
            NSNull(), Null(), wrappedNull as Any, wrappedNothing as Any,
            NSNumber(value: 3), Int64(3), 3, 2.5, true, "text", NSString(string: "text"), Date(), Data([1]),
            Decimal(1), UUID(), URL(string: "https://example.com")!, [1, 2], ["a": 1], NSObject(),
        ]
        for value in values {
            #expect(isNSNull(value) == (value is NSNull), "\(type(of: value))")
        }
        #expect(isNSNull(NSNull()))
        #expect(isNSNull(wrappedNull as Any))
        #expect(!isNSNull(NSNumber(value: 0)))
    }
}
