import Foundation

/// Foundation's undo manager, which Linux Foundation lacks (decision D9): groups of undo actions, undo and
/// redo. Contexts do not register their changes on it yet (a later issue); applications can use it.
open class UndoManager: NSObject, @unchecked Sendable {
    private struct Action { let perform: () -> Void }
    private struct Group { var actions: [Action] = []; var name = "" }

    private var undoStack: [Group] = []
    private var redoStack: [Group] = []
    private var openGroups: [Group] = []
    private var state: State = .idle
    private enum State { case idle, undoing, redoing }
    private var disableCount = 0

    /// Whether each registration outside an explicit group gets its own group.
    public var groupsByEvent = true
    /// The most groups kept (0: no limit).
    public var levelsOfUndo = 0

    /// An undo manager with no actions.
    public override init() { super.init() }

    /// Whether `undo()` is running its actions.
    public var isUndoing: Bool { state == .undoing }
    /// Whether `redo()` is running its actions.
    public var isRedoing: Bool { state == .redoing }
    /// Whether registrations are recorded (not while `disableUndoRegistration()` calls outnumber
    /// `enableUndoRegistration()` calls).
    public var isUndoRegistrationEnabled: Bool { disableCount == 0 }
    /// How many undo groups are open.
    public var groupingLevel: Int { openGroups.count }
    /// Whether there is an action to undo.
    public var canUndo: Bool { !undoStack.isEmpty || openGroups.contains { !$0.actions.isEmpty } }
    /// Whether there is an undone action to redo.
    public var canRedo: Bool { !redoStack.isEmpty }
    /// The name of the group `undo()` would undo, or "".
    public var undoActionName: String { undoStack.last?.name ?? "" }
    /// The name of the group `redo()` would redo, or "".
    public var redoActionName: String { redoStack.last?.name ?? "" }

    /// Stops recording registrations until a matching `enableUndoRegistration()`; calls nest.
    public func disableUndoRegistration() { disableCount += 1 }
    /// Ends one `disableUndoRegistration()`.
    public func enableUndoRegistration() { disableCount = max(0, disableCount - 1) }

    /// Opens a group: the registrations until the matching `endUndoGrouping()` are undone together.
    public func beginUndoGrouping() { openGroups.append(Group()) }

    /// Closes the innermost group; stops when none is open, as Apple's raises.
    public func endUndoGrouping() {
        guard let group = openGroups.popLast() else {
            fatalError("endUndoGrouping called without a matching beginUndoGrouping.")
        }
        if var outer = openGroups.popLast() {
            outer.actions.append(contentsOf: group.actions)
            if outer.name.isEmpty { outer.name = group.name }
            openGroups.append(outer)
        } else if !group.actions.isEmpty {
            push(group)
        }
    }

    private func push(_ group: Group) {
        switch state {
        case .undoing: redoStack.append(group)
        case .redoing: undoStack.append(group)
        case .idle:
            undoStack.append(group)
            redoStack.removeAll()
        }
        if levelsOfUndo > 0 && undoStack.count > levelsOfUndo { undoStack.removeFirst(undoStack.count - levelsOfUndo) }
    }

    /// Registers `handler` to run on `target` when the current group is undone.
    public func registerUndo<Target: AnyObject>(withTarget target: Target, handler: @escaping (Target) -> Void) {
        guard disableCount == 0 else { return }
        let action = Action { handler(target) }
        if openGroups.isEmpty {
            push(Group(actions: [action]))
        } else {
            openGroups[openGroups.count - 1].actions.append(action)
        }
    }

    /// Names the open group, or the last closed one, for `undoActionName`.
    public func setActionName(_ actionName: String) {
        if !openGroups.isEmpty { openGroups[openGroups.count - 1].name = actionName }
        else if !undoStack.isEmpty { undoStack[undoStack.count - 1].name = actionName }
    }

    /// Undoes the last group; its registrations become the redo group.
    public func undo() {
        while !openGroups.isEmpty { endUndoGrouping() }
        guard let group = undoStack.popLast() else { return }
        run(group, as: .undoing)
    }

    /// Redoes the last undone group.
    public func redo() {
        guard let group = redoStack.popLast() else { return }
        run(group, as: .redoing)
    }

    private func run(_ group: Group, as newState: State) {
        state = newState
        openGroups.append(Group(actions: [], name: group.name))
        for action in group.actions.reversed() { action.perform() }
        // An action may have called removeAllActions(), which closed this group too.
        if !openGroups.isEmpty { endUndoGrouping() }
        state = .idle
    }

    /// Clears the undo and redo stacks and enables registration again, as Apple's does.
    public func removeAllActions() {
        undoStack.removeAll()
        redoStack.removeAll()
        openGroups.removeAll()
        disableCount = 0
    }
}
