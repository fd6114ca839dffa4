//! `CommandBuffer`: structural changes recorded now, applied to a context
//! later (while iterating, from other threads, from systems that only read).
//!
//! # How it is kept
//!
//! The buffer is a log of commands in recorded order, each a plain value: a
//! monomorphised function (`apply_add::<Position>`, say) that makes the
//! direct call on the context, the entity it acts on, and the slot of the
//! queue its value waits in. Values live in one FIFO queue per value type
//! (`queues.rs`): a command that carries a `T` pushes it there, and playback
//! pops it, in the same order. No boxed closure per command, no raw-memory code, and
//! every container keeps its capacity when the buffer empties, so refilling a
//! buffer with the same mix of commands allocates nothing.
//!
//! # Placeholders
//!
//! A create command returns a placeholder [`Entity`]: tag `u32::MAX` (which
//! no entity ever gets, see `slot_table.rs`) and, as its index, the number of
//! the create within the buffer. Playback keeps the entity each create made,
//! by number, and later commands on the placeholder go to that entity.

mod command;
mod queues;

use std::fmt;

use self::command::{
    Apply, Command, Kind, Names, Step, apply_add, apply_create, apply_create_with, apply_destroy, apply_remove,
    apply_remove_unique, apply_replace, apply_set_flag, apply_set_unique, bundle_names, component_name, create_run,
    no_names,
};
use self::queues::Queues;
use crate::bundle::Bundle;
use crate::component::Component;
use crate::context::Context;
use crate::entity::Entity;
use crate::error::{CommandFailure, Error};

/// Structural changes recorded for later: create (with placeholder
/// entities), add, replace, remove, destroy, set and remove unique
/// components, set and clear flags. [`playback`](CommandBuffer::playback)
/// applies them to a [`Context`].
///
/// Recording needs no context, so a buffer can be filled while a query or a
/// group borrows one, and from several threads (see below). Nothing is
/// checked while recording: each command is checked when it is played back,
/// by the direct call it stands for.
///
/// # Playback order and events
///
/// Commands are played back in the order they were recorded, one at a time,
/// each through the context's own call: `create_entity`,
/// `create_entity_with`, `add`, `replace`, `remove`, `destroy_entity`,
/// `set_unique`, `take_unique` (for `remove_unique`, the value let go of),
/// `set_flag`. So a playback fires exactly the
/// events (and feeds exactly the groups, collectors and entity indices) the
/// same calls made directly, in that order, would; each command sees the
/// changes of the commands before it. Nothing is merged or reordered: an add
/// then a remove of the same component on an entity fires both. (A run of
/// creates of one bundle type that nobody hears of is carried out as one
/// batch, which ends exactly as the creates one by one would.)
///
/// # Placeholders
///
/// [`create_entity`](CommandBuffer::create_entity) and
/// [`create_entity_with`](CommandBuffer::create_entity_with) return a
/// placeholder `Entity` (printed `p0`, `p1`, ...), usable by the later
/// commands of the same buffer: at playback they act on the entity the create
/// made. A placeholder names no entity of any context, so used directly on a
/// context it is a stale handle ([`Error::StaleEntity`]). After playback,
/// [`resolve`](CommandBuffer::resolve) tells which entity a placeholder
/// became, until the buffer records again or is cleared.
///
/// A placeholder belongs to the buffer that made it (and to a buffer that
/// one is [appended](CommandBuffer::append) to). One from another buffer is
/// caught only when no create with its number precedes the command.
///
/// # Failures
///
/// A command that fails (its entity is stale at playback, it adds a
/// component the entity has, its placeholder's create failed, ...) changes
/// nothing, as the direct call it stands for changes nothing when it returns
/// an error, and does not stop the others. Playback returns
/// [`Error::CommandsFailed`] listing every failed command (its position,
/// what it was to do, and the error), with everything else applied. The
/// buffer is empty after playback either way.
///
/// # Threads
///
/// A `CommandBuffer` is `Send` and `Sync` (component values are). Give each
/// thread a buffer of its own, then [`append`](CommandBuffer::append) them
/// into one (placeholders are renumbered) and play that back; or share one
/// behind a `Mutex`.
///
/// # Example: despawn and spawn while iterating
/// ```
/// use reactecs::prelude::*;
/// #[derive(Debug, PartialEq)] struct Health(u32);
/// #[derive(Debug, PartialEq)] struct Corpse(u32);
/// reactecs::component!(Health, Corpse);
///
/// let mut game = Context::new();
/// let alive = game.create_entity_with(Health(3))?;
/// game.create_entity_with(Health(0))?;
/// game.create_entity_with(Health(0))?;
///
/// let mut commands = CommandBuffer::new();
/// for (e, health) in game.query::<(Entity, &Health)>().iter() {
///     if health.0 == 0 {
///         commands.destroy_entity(e);
///         let corpse = commands.create_entity();
///         commands.add(corpse, Corpse(e.index()));
///     }
/// }
/// assert_eq!(commands.len(), 6);
/// commands.playback(&mut game)?;
///
/// assert!(commands.is_empty());
/// assert_eq!(game.len(), 3); // `alive` and two corpses
/// assert_eq!(game.query::<&Health>().iter().count(), 1);
/// assert_eq!(game.query::<&Corpse>().iter().count(), 2);
/// assert!(game.is_alive(alive));
/// # Ok::<(), reactecs::Error>(())
/// ```
#[derive(Default)]
pub struct CommandBuffer {
    /// The commands, in recorded order.
    commands: Vec<Command>,
    /// Their values.
    queues: Queues,
    /// The number the next create's placeholder gets.
    placeholders: u32,
    /// After playback, the entity each create made, by placeholder number
    /// (`Entity::PLACEHOLDER` for a failed create).
    created: Vec<Entity>,
}

impl CommandBuffer {
    /// An empty buffer. It allocates as commands are recorded, and keeps
    /// what it allocated for reuse.
    pub fn new() -> Self {
        CommandBuffer::default()
    }

    /// The number of commands recorded (since the last playback or clear).
    pub fn len(&self) -> usize {
        self.commands.len()
    }

    /// Whether no command is recorded.
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// Drops every recorded command and value, and forgets the placeholders
    /// and what they resolved to. The buffer keeps its memory for reuse.
    pub fn clear(&mut self) {
        self.empty();
        self.created.clear();
    }

    /// Records the creation of an entity with no components, and returns its
    /// placeholder. Played back as
    /// [`Context::create_entity`](Context::create_entity).
    ///
    /// # Panics
    /// If the buffer already holds 2^32 - 1 creates.
    pub fn create_entity(&mut self) -> Entity {
        let placeholder = self.next_placeholder();
        self.record(Kind::Create, placeholder, apply_create, no_names);
        placeholder
    }

    /// Records the creation of an entity with the components of `bundle`,
    /// and returns its placeholder. Played back as
    /// [`Context::create_entity_with`](Context::create_entity_with) (the
    /// bundle's checks, such as a unique component being free, are made
    /// then).
    ///
    /// # Panics
    /// If the buffer already holds 2^32 - 1 creates.
    pub fn create_entity_with<B: Bundle>(&mut self, bundle: B) -> Entity {
        let placeholder = self.next_placeholder();
        self.record_value(
            Kind::CreateWith,
            placeholder,
            apply_create_with::<B>,
            bundle_names::<B>,
            bundle,
        );
        if let Some(command) = self.commands.last() {
            self.queues.set_create_run(command.queue, create_run::<B>);
        }
        placeholder
    }

    /// Records the creation of one entity per bundle, in order, and returns
    /// their placeholders (consecutive, in the same order). Played back as
    /// [`Context::create_entities_with`] plays them: a run of creates with
    /// one bundle type is resolved once and made in one go.
    ///
    /// # Example
    /// ```
    /// use reactecs::{CommandBuffer, Context};
    /// #[derive(Debug, PartialEq)] struct Spark(u8);
    /// reactecs::component!(Spark);
    ///
    /// let mut commands = CommandBuffer::new();
    /// let placeholders: Vec<_> = commands.create_entities_with((0..3).map(Spark)).collect();
    /// let mut game = Context::new();
    /// commands.playback(&mut game)?;
    /// let last = commands.resolve(placeholders[2]).unwrap();
    /// assert_eq!(game.get::<Spark>(last)?, &Spark(2));
    /// assert_eq!(game.len(), 3);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    ///
    /// # Panics
    /// If the buffer would hold more than 2^32 - 1 creates.
    pub fn create_entities_with<B: Bundle, I: IntoIterator<Item = B>>(
        &mut self,
        bundles: I,
    ) -> impl ExactSizeIterator<Item = Entity> + use<B, I> {
        let first = self.placeholders;
        for bundle in bundles {
            self.create_entity_with(bundle);
        }
        (first..self.placeholders).map(Entity::placeholder)
    }

    /// Records adding component `value` to `entity` (a real entity, or a
    /// placeholder of this buffer). Played back as [`Context::add`].
    pub fn add<T: Component>(&mut self, entity: Entity, value: T) -> &mut Self {
        self.record_value(Kind::Add, entity, apply_add::<T>, component_name::<T>, value);
        self
    }

    /// Records setting `entity`'s `T` to `value` (an add if it has none).
    /// Played back as [`Context::replace`].
    pub fn replace<T: Component>(&mut self, entity: Entity, value: T) -> &mut Self {
        self.record_value(Kind::Replace, entity, apply_replace::<T>, component_name::<T>, value);
        self
    }

    /// Records removing (and dropping) `entity`'s `T`. Played back as
    /// [`Context::remove`].
    pub fn remove<T: Component>(&mut self, entity: Entity) -> &mut Self {
        self.record(Kind::Remove, entity, apply_remove::<T>, component_name::<T>);
        self
    }

    /// Records destroying `entity`. Played back as
    /// [`Context::destroy_entity`].
    pub fn destroy_entity(&mut self, entity: Entity) -> &mut Self {
        self.record(Kind::Destroy, entity, apply_destroy, no_names);
        self
    }

    /// Records setting unique component `T` to `value`. Played back as
    /// [`Context::set_unique`] (which may create the holder; that entity has
    /// no placeholder: find it with [`Context::unique_entity`]).
    pub fn set_unique<T: Component>(&mut self, value: T) -> &mut Self {
        self.record_value(
            Kind::SetUnique,
            Entity::PLACEHOLDER,
            apply_set_unique::<T>,
            component_name::<T>,
            value,
        );
        self
    }

    /// Records removing unique component `T`. Played back as
    /// [`Context::take_unique`], the value let go of as a removal's is
    /// (into its pool, for a `pooled` component).
    pub fn remove_unique<T: Component>(&mut self) -> &mut Self {
        self.record(
            Kind::RemoveUnique,
            Entity::PLACEHOLDER,
            apply_remove_unique::<T>,
            component_name::<T>,
        );
        self
    }

    /// Records setting (`true`) or clearing (`false`) flag `T` on `entity`.
    /// Played back as [`Context::set_flag`]: already as asked, it does
    /// nothing.
    pub fn set_flag<T: Component + Default>(&mut self, entity: Entity, value: bool) -> &mut Self {
        const { assert!(size_of::<T>() == 0, "`set_flag` takes a zero-sized component") };
        self.record(Kind::SetFlag(value), entity, apply_set_flag::<T>, component_name::<T>);
        self
    }

    /// Applies the recorded commands to `context`, in recorded order (see
    /// the [type docs](CommandBuffer)), and empties the buffer, keeping its
    /// memory. Afterwards [`resolve`](CommandBuffer::resolve) tells which
    /// entity each placeholder became.
    ///
    /// If an event handler panics during a command, the panic goes on; the
    /// commands after it are dropped (with their values) and the buffer is
    /// left empty.
    ///
    /// # Errors
    /// [`Error::CommandsFailed`] if any command failed, listing each with the
    /// error its direct call returned (or [`Error::UnresolvedPlaceholder`]
    /// for a command on a placeholder no successful create of this buffer
    /// made). A failed command changed nothing; every other command was
    /// applied.
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// #[derive(Debug, PartialEq)] struct Position(i32);
    /// reactecs::component!(Position);
    ///
    /// let mut game = Context::new();
    /// let gone = game.create_entity();
    /// game.destroy_entity(gone)?;
    ///
    /// let mut commands = CommandBuffer::new();
    /// let e = commands.create_entity();
    /// commands.add(e, Position(1));
    /// commands.add(gone, Position(2)); // stale by playback
    /// commands.replace(e, Position(3));
    ///
    /// let Err(Error::CommandsFailed { failures, .. }) = commands.playback(&mut game) else {
    ///     panic!("the command on `gone` fails");
    /// };
    /// assert_eq!(failures.len(), 1);
    /// assert_eq!(failures[0].index, 2);
    /// assert_eq!(failures[0].command, format!("add `Position` to {gone}"));
    /// assert!(matches!(*failures[0].error, Error::StaleEntity { .. }));
    ///
    /// // The rest was applied:
    /// let e = commands.resolve(e).expect("the create succeeded");
    /// assert_eq!(game.get::<Position>(e)?, &Position(3));
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn playback(&mut self, context: &mut Context) -> Result<(), Error> {
        if self.commands.is_empty() {
            return Ok(());
        }
        // The first command recorded cleared what the last playback resolved.
        debug_assert!(self.created.is_empty());
        let mut failures = Vec::new();
        let emptying = Emptying(self);
        let CommandBuffer {
            commands,
            queues,
            created,
            ..
        } = &mut *emptying.0;
        let mut step = Step {
            queues,
            context,
            created,
            commands,
        };
        // Commands before `single` were found not to form a run of creates
        // that can be carried out at once.
        let mut single = 0;
        let mut index = 0;
        while let Some(command) = commands.get(index) {
            if command.kind == Kind::CreateWith
                && index >= single
                && let Some(run) = step.queues.create_run(command.queue)
            {
                let count = commands[index..]
                    .iter()
                    .take_while(|next| next.kind == Kind::CreateWith && next.queue == command.queue)
                    .count();
                if count > 1 && run(step.queues, command.queue, count, step.context, step.created) {
                    index += count;
                    continue;
                }
                single = index + count;
            }
            match (command.apply)(command, &mut step) {
                Ok(made) => {
                    if let Some(entity) = made {
                        debug_assert_eq!(
                            command.entity.placeholder_number(),
                            u32::try_from(step.created.len()).ok()
                        );
                        step.created.push(entity);
                    }
                }
                Err(error) => {
                    if command.creates() {
                        step.created.push(Entity::PLACEHOLDER);
                    }
                    failures.push(CommandFailure {
                        index,
                        command: command.describe(),
                        entity: command.named_entity(),
                        error: Box::new(error),
                    });
                }
            }
            index += 1;
        }
        drop(emptying);
        if failures.is_empty() {
            Ok(())
        } else {
            Err(Error::CommandsFailed {
                context: context.name(),
                failures,
            })
        }
    }

    /// The entity `placeholder` became at the last playback: `None` if its
    /// create failed, or it is not a placeholder of this buffer (or the
    /// buffer has recorded or been cleared since). An entity that is not a
    /// placeholder is returned as it is, except [`Entity::PLACEHOLDER`],
    /// which stands for no entity: `None`.
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// struct Position(i32);
    /// reactecs::component!(Position);
    ///
    /// let mut game = Context::new();
    /// let mut commands = CommandBuffer::new();
    /// let placeholder = commands.create_entity_with(Position(7));
    /// assert!(!game.is_alive(placeholder)); // names no entity yet
    /// commands.playback(&mut game)?;
    /// let e = commands.resolve(placeholder).unwrap();
    /// assert_eq!(game.get::<Position>(e)?.0, 7);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn resolve(&self, placeholder: Entity) -> Option<Entity> {
        match placeholder.placeholder_number() {
            None => (!placeholder.is_null()).then_some(placeholder),
            Some(number) => self
                .created
                .get(number as usize)
                .copied()
                .filter(|entity| !entity.is_null()),
        }
    }

    /// Moves every command of `other` to the end of this buffer, leaving
    /// `other` empty (and its memory kept for reuse). This is how buffers
    /// filled on several threads become one.
    ///
    /// `other`'s commands keep their meaning: its placeholders are
    /// renumbered, in its commands, to follow this buffer's. The placeholder
    /// values `other` returned to you are not (they are plain `Entity`
    /// values): record every command that uses a placeholder into the
    /// buffer that made it, then append. After playback, to find what such
    /// a placeholder became, look at its components (or use one buffer).
    ///
    /// # Panics
    /// If the two buffers hold more than 2^32 - 1 creates together.
    ///
    /// # Example
    /// ```
    /// use reactecs::prelude::*;
    /// struct Spark(u32);
    /// reactecs::component!(Spark);
    ///
    /// let mut game = Context::new();
    /// let mut buffers = [CommandBuffer::new(), CommandBuffer::new()];
    /// std::thread::scope(|scope| {
    ///     for (thread, commands) in buffers.iter_mut().enumerate() {
    ///         scope.spawn(move || {
    ///             for i in 0..10 {
    ///                 let e = commands.create_entity();
    ///                 commands.add(e, Spark(thread as u32 * 100 + i));
    ///             }
    ///         });
    ///     }
    /// });
    /// let [mut all, mut second] = buffers;
    /// all.append(&mut second);
    /// assert!(second.is_empty());
    /// all.playback(&mut game)?;
    /// assert_eq!(game.query::<&Spark>().iter().count(), 20);
    /// # Ok::<(), reactecs::Error>(())
    /// ```
    pub fn append(&mut self, other: &mut CommandBuffer) {
        if other.commands.is_empty() {
            return;
        }
        if self.commands.is_empty() {
            self.created.clear();
        }
        let offset = self.placeholders;
        let placeholders = offset
            .checked_add(other.placeholders) // at most `Entity::PLACEHOLDERS`, `u32::MAX`
            .expect("at most 2^32 - 1 creates in one command buffer (the documented panic of `append`)");
        self.commands.reserve(other.commands.len());
        // Where each of `other`'s queues goes here: looked up once per
        // queue, not per command.
        let adopted = self.queues.adopt_all(&other.queues);
        for mut command in other.commands.drain(..) {
            if let Some(number) = command.entity.placeholder_number() {
                let renumbered = number.saturating_add(offset).min(Entity::PLACEHOLDERS - 1);
                command.entity = Entity::placeholder(renumbered);
            }
            if command.queue != queues::NO_QUEUE {
                command.queue = adopted[command.queue as usize];
            }
            self.commands.push(command);
        }
        self.queues.take_all(&mut other.queues);
        self.placeholders = placeholders;
        other.placeholders = 0;
        other.created.clear();
    }

    /// The placeholder for the next create.
    fn next_placeholder(&mut self) -> Entity {
        assert!(
            self.placeholders < Entity::PLACEHOLDERS,
            "at most 2^32 - 1 creates in one command buffer"
        );
        let placeholder = Entity::placeholder(self.placeholders);
        self.placeholders += 1;
        placeholder
    }

    /// Appends a command without a value.
    #[inline]
    fn record(&mut self, kind: Kind, entity: Entity, apply: Apply, names: Names) {
        self.push(Command::new(kind, entity, apply, names));
    }

    /// Appends a command carrying `value`.
    #[inline]
    fn record_value<V: Send + Sync + 'static>(
        &mut self,
        kind: Kind,
        entity: Entity,
        apply: Apply,
        names: Names,
        value: V,
    ) {
        let mut command = Command::new(kind, entity, apply, names);
        command.queue = self.queues.push(value);
        self.push(command);
    }

    /// Appends `command`. The first command after a playback forgets what
    /// the placeholders resolved to: their numbers start over.
    #[inline]
    fn push(&mut self, command: Command) {
        if self.commands.is_empty() {
            self.created.clear();
        }
        self.commands.push(command);
    }

    /// Drops the commands and their values, keeping the memory.
    fn empty(&mut self) {
        self.commands.clear();
        self.queues.clear();
        self.placeholders = 0;
    }
}

/// Empties the buffer when dropped: at the end of a playback, or when a
/// panic unwinds out of one (so no command is left without its value).
struct Emptying<'a>(&'a mut CommandBuffer);

impl Drop for Emptying<'_> {
    fn drop(&mut self) {
        self.0.empty();
    }
}

impl fmt::Debug for CommandBuffer {
    /// The recorded commands, described: `CommandBuffer["create entity p0",
    /// "add `Position` to p0"]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CommandBuffer")?;
        f.debug_list()
            .entries(self.commands.iter().map(Command::describe))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_is_32_bytes() {
        assert_eq!(size_of::<Command>(), 32);
    }

    #[test]
    fn a_buffer_is_send_and_sync() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<CommandBuffer>();
    }

    #[test]
    fn append_moves_values_and_leaves_the_other_buffer_empty() {
        let mut a = CommandBuffer::new();
        let mut b = CommandBuffer::new();
        a.queues.push(1u8);
        b.queues.push(2u8);
        b.queues.push("two");
        b.commands.push(Command::new(
            Kind::Create,
            Entity::placeholder(0),
            apply_create,
            no_names,
        ));
        b.placeholders = 1;
        a.append(&mut b);
        assert_eq!(a.queues.len(), 3);
        assert_eq!(b.queues.len(), 0);
        assert_eq!(a.commands[0].entity, Entity::placeholder(0));
        assert_eq!((a.queues.pop::<u8>(0), a.queues.pop::<u8>(0)), (1, 2));
        assert_eq!(a.queues.pop::<&str>(1), "two");
    }
}
