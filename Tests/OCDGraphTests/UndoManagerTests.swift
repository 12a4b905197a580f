import Foundation
import OCDGraph
import Testing

/// The undo manager as Apple documents Foundation's (Linux Foundation has none; this is OpenCoreData's).
@Suite struct UndoManagerTests {
    final class Target: NSObject {}

    /// Apple's manager keeps an unowned reference to the target: the usual
    /// `registerUndo(withTarget: self)` of an object owning its manager must not keep it alive.
    @Test func registrationsDoNotKeepTheirTargetAlive() {
        let manager = UndoManager()
        weak var gone: Target?
        var ran = false
        do {
            let target = Target()
            gone = target
            manager.registerUndo(withTarget: target) { _ in ran = true }
        }
        #expect(gone == nil)
        manager.undo()
        #expect(!ran)
    }

    /// Subclasses override its methods, as Apple's guide suggests for menu titles.
    @Test func methodsAreOverridable() {
        final class Counting: UndoManager, @unchecked Sendable {
            var undos = 0
            override func undo() { undos += 1; super.undo() }
            override func undoMenuTitle(forUndoActionName actionName: String) -> String { "Annuler \(actionName)" }
        }
        let manager = Counting()
        let target = Target()
        manager.registerUndo(withTarget: target) { target in manager.registerUndo(withTarget: target) { _ in } }
        manager.setActionName("Typing")
        #expect(manager.undoMenuItemTitle == "Annuler Typing")
        manager.undo()
        #expect(manager.undos == 1)
        #expect(manager.redoMenuItemTitle == "Redo Typing")
        #expect(manager.undoMenuItemTitle == "")
    }

    @Test func undoAndRedoPostTheirNotificationsInOrder() {
        let manager = UndoManager()
        let target = Target()
        let names: [Notification.Name] = [
            .NSUndoManagerCheckpoint, .NSUndoManagerWillUndoChange, .NSUndoManagerDidUndoChange,
            .NSUndoManagerWillRedoChange, .NSUndoManagerDidRedoChange, .NSUndoManagerDidOpenUndoGroup,
            .NSUndoManagerWillCloseUndoGroup, .NSUndoManagerDidCloseUndoGroup,
        ]
        let seen = UndoNotificationRecorder()
        let tokens = names.map { name in
            NotificationCenter.default.addObserver(forName: name, object: manager, queue: nil) { seen.append($0.name.rawValue) }
        }
        defer { tokens.forEach(NotificationCenter.default.removeObserver) }
        manager.beginUndoGrouping()
        manager.registerUndo(withTarget: target) { target in manager.registerUndo(withTarget: target) { _ in } }
        manager.endUndoGrouping()
        manager.undo()
        manager.redo()
        #expect(seen.values == [
            "NSUndoManagerCheckpointNotification", "NSUndoManagerDidOpenUndoGroupNotification",
            "NSUndoManagerCheckpointNotification", "NSUndoManagerWillCloseUndoGroupNotification", "NSUndoManagerDidCloseUndoGroupNotification",
            "NSUndoManagerCheckpointNotification", "NSUndoManagerWillUndoChangeNotification", "NSUndoManagerDidUndoChangeNotification",
            "NSUndoManagerCheckpointNotification", "NSUndoManagerWillRedoChangeNotification", "NSUndoManagerDidRedoChangeNotification",
        ])
        #expect(UndoManager.didUndoChangeNotification == .NSUndoManagerDidUndoChange)
    }

    @Test func removingATargetsActionsKeepsTheOthers() {
        let manager = UndoManager()
        let a = Target(), b = Target()
        var ran: [String] = []
        manager.registerUndo(withTarget: a) { _ in ran.append("a") }
        manager.registerUndo(withTarget: b) { _ in ran.append("b") }
        manager.disableUndoRegistration()
        manager.removeAllActions(withTarget: b)
        #expect(!manager.isUndoRegistrationEnabled, "registration stays disabled")
        manager.enableUndoRegistration()
        manager.undo()
        #expect(ran == ["a"])
        #expect(!manager.canUndo)
    }

    /// "If you change the limit to a level below the prior limit, the manager immediately drops old undo
    /// groups."
    @Test func loweringTheLevelsDropsOldGroupsAtOnce() {
        let manager = UndoManager()
        let target = Target()
        var ran: [Int] = []
        for i in 1...3 { manager.registerUndo(withTarget: target) { _ in ran.append(i) } }
        manager.levelsOfUndo = 1
        manager.undo()
        manager.undo()
        #expect(ran == [3])
    }

    /// A redo with a group open records its registrations as a group of their own, not into the open one.
    @Test func aRedoWithAGroupOpenKeepsItsRegistrationsApart() {
        let manager = UndoManager()
        let target = Target()
        var value = 0
        func set(_ new: Int) {
            let old = value
            value = new
            manager.registerUndo(withTarget: target) { _ in set(old) }
        }
        set(1)
        manager.undo()
        #expect(value == 0 && manager.canRedo)
        manager.beginUndoGrouping()
        manager.redo()
        #expect(value == 1)
        manager.endUndoGrouping()
        manager.undo()
        #expect(value == 0, "the redone change is undone on its own")
    }

    @Test func theContextForwardsUndoAndRedo() throws {
        let stack = try TestStack()
        let manager = UndoManager()
        stack.context.undoManager = manager
        var log: [String] = []
        manager.registerUndo(withTarget: stack.context) { context in
            log.append("undo")
            manager.registerUndo(withTarget: context) { _ in log.append("redo") }
        }
        stack.context.undo()
        stack.context.redo()
        #expect(log == ["undo", "redo"])
    }

    @Test func misuseStopsAsApplesRaises() async {
        await #expect(processExitsWith: .failure) {
            let manager = UndoManager()
            manager.beginUndoGrouping()
            manager.beginUndoGrouping()
            manager.undo()
        }
        await #expect(processExitsWith: .failure) {
            UndoManager().enableUndoRegistration()
        }
    }
}

/// Notification names seen, from whichever thread posts.
final class UndoNotificationRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [String] = []
    func append(_ value: String) { lock.withLock { seen.append(value) } }
    var values: [String] { lock.withLock { seen } }
}
