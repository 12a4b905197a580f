import Foundation

/// Foundation's undo manager, which Linux Foundation lacks (decision D9): groups of undo actions, undo and
/// redo, the notifications Apple's posts. Contexts do not register their changes on it yet (a later
/// issue); applications can use it, and `NSManagedObjectContext.undo()` and `redo()` forward to it.
///
/// Like a context, an undo manager is used from one queue at a time (Apple's is main-actor isolated):
/// nothing here locks. Selector- and invocation-based registration (`registerUndo(withTarget:selector:
/// object:)`, `prepare(withInvocationTarget:)`) need the Objective-C runtime and are not provided.
open class UndoManager: NSObject, @unchecked Sendable {
    private struct Action {
        /// For `removeAllActions(withTarget:)`. The target itself is held weakly by `perform`, as Apple's
        /// manager keeps an unowned reference: a target owning its undo manager must not be kept alive by
        /// its own registrations.
        let targetID: ObjectIdentifier
        let perform: () -> Void
    }
    private struct Group { var actions: [Action] = []; var name = "" }

    private var undoStack: [Group] = []
    private var redoStack: [Group] = []
    private var openGroups: [Group] = []
    private var state: State = .idle
    private enum State { case idle, undoing, redoing }
    private var disableCount = 0
    /// Counts `removeAllActions()` calls, so that an undo whose action cleared everything does not bring
    /// back the groups it set aside.
    private var clearings = 0

    /// Whether each registration outside an explicit group gets its own group.
    open var groupsByEvent = true
    /// The most groups kept (0: no limit). Lowering it drops the oldest groups at once, as Apple's does.
    open var levelsOfUndo = 0 {
        didSet { trimUndoStack() }
    }

    /// An undo manager with no actions.
    public override init() { super.init() }

    /// Whether `undo()` is running its actions.
    open var isUndoing: Bool { state == .undoing }
    /// Whether `redo()` is running its actions.
    open var isRedoing: Bool { state == .redoing }
    /// Whether registrations are recorded (not while `disableUndoRegistration()` calls outnumber
    /// `enableUndoRegistration()` calls).
    open var isUndoRegistrationEnabled: Bool { disableCount == 0 }
    /// How many undo groups are open.
    open var groupingLevel: Int { openGroups.count }
    /// Whether there is an action to undo.
    open var canUndo: Bool { !undoStack.isEmpty || openGroups.contains { !$0.actions.isEmpty } }
    /// Whether there is an undone action to redo.
    open var canRedo: Bool { !redoStack.isEmpty }
    /// The name of the group `undo()` would undo, or "".
    open var undoActionName: String { undoStack.last?.name ?? "" }
    /// The name of the group `redo()` would redo, or "".
    open var redoActionName: String { redoStack.last?.name ?? "" }
    /// The Undo menu item's title for the group `undo()` would undo ("Undo Typing"), "" when there is none.
    open var undoMenuItemTitle: String { canUndo ? undoMenuTitle(forUndoActionName: undoActionName) : "" }
    /// The Redo menu item's title for the group `redo()` would redo, "" when there is none.
    open var redoMenuItemTitle: String { canRedo ? redoMenuTitle(forUndoActionName: redoActionName) : "" }

    /// "Undo", followed by `actionName` when it has one; override to localize.
    open func undoMenuTitle(forUndoActionName actionName: String) -> String {
        actionName.isEmpty ? "Undo" : "Undo \(actionName)"
    }

    /// "Redo", followed by `actionName` when it has one; override to localize.
    open func redoMenuTitle(forUndoActionName actionName: String) -> String {
        actionName.isEmpty ? "Redo" : "Redo \(actionName)"
    }

    /// Stops recording registrations until a matching `enableUndoRegistration()`; calls nest.
    open func disableUndoRegistration() { disableCount += 1 }
    /// Ends one `disableUndoRegistration()`; stops without one, as Apple's raises.
    open func enableUndoRegistration() {
        guard disableCount > 0 else {
            fatalError("-[NSUndoManager enableUndoRegistration]: unbalanced call: registration is not disabled.")
        }
        disableCount -= 1
    }

    /// Opens a group: the registrations until the matching `endUndoGrouping()` are undone together. Posts
    /// `NSUndoManagerCheckpoint` and `NSUndoManagerDidOpenUndoGroup`.
    open func beginUndoGrouping() {
        post(.NSUndoManagerCheckpoint)
        openGroups.append(Group())
        post(.NSUndoManagerDidOpenUndoGroup)
    }

    /// Closes the innermost group; stops when none is open, as Apple's raises. Posts
    /// `NSUndoManagerCheckpoint`, `NSUndoManagerWillCloseUndoGroup` and `NSUndoManagerDidCloseUndoGroup`.
    open func endUndoGrouping() {
        guard !openGroups.isEmpty else {
            fatalError("endUndoGrouping called without a matching beginUndoGrouping.")
        }
        post(.NSUndoManagerCheckpoint)
        post(.NSUndoManagerWillCloseUndoGroup)
        closeGroup()
        post(.NSUndoManagerDidCloseUndoGroup)
    }

    private func closeGroup() {
        guard let group = openGroups.popLast() else { return }
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
        trimUndoStack()
    }

    private func trimUndoStack() {
        if levelsOfUndo > 0 && undoStack.count > levelsOfUndo { undoStack.removeFirst(undoStack.count - levelsOfUndo) }
    }

    /// Registers `handler` to run on `target` when the current group is undone. The target is held weakly
    /// (Apple's manager keeps an unowned reference): once it is gone, its actions do nothing.
    open func registerUndo<Target: AnyObject>(withTarget target: Target, handler: @escaping (Target) -> Void) {
        guard disableCount == 0 else { return }
        let action = Action(targetID: ObjectIdentifier(target)) { [weak target] in
            if let target { handler(target) }
        }
        if openGroups.isEmpty {
            push(Group(actions: [action]))
        } else {
            openGroups[openGroups.count - 1].actions.append(action)
        }
    }

    /// Names the open group, or the last closed one, for `undoActionName`.
    open func setActionName(_ actionName: String) {
        if !openGroups.isEmpty { openGroups[openGroups.count - 1].name = actionName }
        else if !undoStack.isEmpty { undoStack[undoStack.count - 1].name = actionName }
    }

    /// Closes the open group if there is one and undoes the last group; its registrations become the redo
    /// group. Stops with more than one group open, as Apple's raises. Posts `NSUndoManagerCheckpoint`,
    /// `NSUndoManagerWillUndoChange` and `NSUndoManagerDidUndoChange`.
    open func undo() {
        guard openGroups.count <= 1 else {
            fatalError("-[NSUndoManager undo]: undo was called with too many nested undo groups.")
        }
        if !openGroups.isEmpty { endUndoGrouping() }
        undoNestedGroup()
    }

    /// Undoes the last group. Posts `NSUndoManagerCheckpoint`, `NSUndoManagerWillUndoChange` and
    /// `NSUndoManagerDidUndoChange`.
    open func undoNestedGroup() {
        post(.NSUndoManagerCheckpoint)
        guard let group = undoStack.popLast() else { return }
        post(.NSUndoManagerWillUndoChange)
        run(group, as: .undoing)
        post(.NSUndoManagerDidUndoChange)
    }

    /// Redoes the last undone group; stops during an undo, as Apple's raises. Posts
    /// `NSUndoManagerCheckpoint`, `NSUndoManagerWillRedoChange` and `NSUndoManagerDidRedoChange`.
    open func redo() {
        guard state != .undoing else {
            fatalError("-[NSUndoManager redo]: redo was called during undo.")
        }
        post(.NSUndoManagerCheckpoint)
        guard let group = redoStack.popLast() else { return }
        post(.NSUndoManagerWillRedoChange)
        run(group, as: .redoing)
        post(.NSUndoManagerDidRedoChange)
    }

    private func run(_ group: Group, as newState: State) {
        state = newState
        // The registrations the actions make form one group of their own, below any group a caller opened.
        let outer = openGroups
        let clearingsBefore = clearings
        openGroups = [Group(actions: [], name: group.name)]
        for action in group.actions.reversed() { action.perform() }
        // An action may have called removeAllActions(), which closed this group too.
        while !openGroups.isEmpty { closeGroup() }
        if clearings == clearingsBefore { openGroups = outer }
        state = .idle
    }

    /// Clears the undo and redo stacks and enables registration again, as Apple's does.
    open func removeAllActions() {
        undoStack.removeAll()
        redoStack.removeAll()
        openGroups.removeAll()
        disableCount = 0
        clearings &+= 1
    }

    /// Removes the actions registered with `target` from both stacks and the open groups (a group left
    /// with none goes too). Registration stays as it is.
    open func removeAllActions(withTarget target: Any) {
        guard let object = target as AnyObject? else { return }
        let id = ObjectIdentifier(object)
        func without(_ groups: [Group]) -> [Group] {
            groups.compactMap { group in
                var kept = group
                kept.actions.removeAll { $0.targetID == id }
                return kept.actions.isEmpty ? nil : kept
            }
        }
        undoStack = without(undoStack)
        redoStack = without(redoStack)
        for index in openGroups.indices { openGroups[index].actions.removeAll { $0.targetID == id } }
    }

    private func post(_ name: Notification.Name) {
        NotificationCenter.default.post(name: name, object: self)
    }

    /// Apple's Swift names for the notifications.
    public static let checkpointNotification = Notification.Name.NSUndoManagerCheckpoint
    /// Posted before `undo()` runs a group.
    public static let willUndoChangeNotification = Notification.Name.NSUndoManagerWillUndoChange
    /// Posted after `undo()` ran a group.
    public static let didUndoChangeNotification = Notification.Name.NSUndoManagerDidUndoChange
    /// Posted before `redo()` runs a group.
    public static let willRedoChangeNotification = Notification.Name.NSUndoManagerWillRedoChange
    /// Posted after `redo()` ran a group.
    public static let didRedoChangeNotification = Notification.Name.NSUndoManagerDidRedoChange
    /// Posted when `beginUndoGrouping()` opened a group.
    public static let didOpenUndoGroupNotification = Notification.Name.NSUndoManagerDidOpenUndoGroup
    /// Posted before `endUndoGrouping()` closes a group.
    public static let willCloseUndoGroupNotification = Notification.Name.NSUndoManagerWillCloseUndoGroup
    /// Posted when `endUndoGrouping()` closed a group.
    public static let didCloseUndoGroupNotification = Notification.Name.NSUndoManagerDidCloseUndoGroup
}

extension Notification.Name {
    /// Posted by an undo manager when it opens or closes a group, and before it undoes or redoes.
    public static let NSUndoManagerCheckpoint = Notification.Name("NSUndoManagerCheckpointNotification")
    /// Posted before an undo manager undoes a group.
    public static let NSUndoManagerWillUndoChange = Notification.Name("NSUndoManagerWillUndoChangeNotification")
    /// Posted after an undo manager undid a group.
    public static let NSUndoManagerDidUndoChange = Notification.Name("NSUndoManagerDidUndoChangeNotification")
    /// Posted before an undo manager redoes a group.
    public static let NSUndoManagerWillRedoChange = Notification.Name("NSUndoManagerWillRedoChangeNotification")
    /// Posted after an undo manager redid a group.
    public static let NSUndoManagerDidRedoChange = Notification.Name("NSUndoManagerDidRedoChangeNotification")
    /// Posted after an undo manager opened a group.
    public static let NSUndoManagerDidOpenUndoGroup = Notification.Name("NSUndoManagerDidOpenUndoGroupNotification")
    /// Posted before an undo manager closes a group.
    public static let NSUndoManagerWillCloseUndoGroup = Notification.Name("NSUndoManagerWillCloseUndoGroupNotification")
    /// Posted after an undo manager closed a group.
    public static let NSUndoManagerDidCloseUndoGroup = Notification.Name("NSUndoManagerDidCloseUndoGroupNotification")
}
