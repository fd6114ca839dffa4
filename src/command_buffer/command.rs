//! One recorded command: what it does (a monomorphised function), whom to,
//! and where its value waits.

use super::queues::{NO_QUEUE, Queues};
use crate::bundle::Bundle;
use crate::component::Component;
use crate::context::Context;
use crate::entity::Entity;
use crate::error::Error;

/// Carries a command out on the context: takes its value (if it has one)
/// from the step's queues, then makes the direct call on the step's
/// [`target`](Step::target). Returns the entity a create made.
///
/// The value is taken before the target is looked at, so a failed command
/// still consumes (and drops) its value.
pub(super) type Apply = fn(&Command, &mut Step<'_>) -> Applied;

/// What carrying a command out gives: the entity a create made, or the
/// error of the direct call.
pub(super) type Applied = Result<Option<Entity>, Error>;

/// What a playback lends each command it carries out: the queues its
/// value waits in, the context, and what resolves its placeholder.
pub(super) struct Step<'a> {
    pub(super) queues: &'a mut Queues,
    pub(super) context: &'a mut Context,
    /// The entities the creates played back so far made.
    pub(super) created: &'a mut Vec<Entity>,
    /// The buffer's commands, to name the create that failed.
    pub(super) commands: &'a [Command],
}

impl Step<'_> {
    /// Takes `command`'s value, of type `V`.
    #[inline]
    fn value<V: 'static>(&mut self, command: &Command) -> V {
        self.queues.pop::<V>(command.queue)
    }

    /// The entity `command` acts on: its entity, or what that placeholder
    /// was resolved to ([`Error::UnresolvedPlaceholder`] if no successful
    /// create of this buffer made it).
    #[inline]
    fn target(&self, command: &Command) -> Result<Entity, Error> {
        let entity = command.entity;
        let Some(number) = entity.placeholder_number() else {
            return Ok(entity);
        };
        match self.created.get(number as usize) {
            Some(&made) if !made.is_null() => Ok(made),
            made => Err(Error::UnresolvedPlaceholder {
                context: self.context.name(),
                placeholder: entity,
                creator: made.and_then(|_| {
                    self.commands
                        .iter()
                        .position(|command| command.creates() && command.entity == entity)
                }),
            }),
        }
    }
}

/// Prints the component types a command names.
pub(super) type Names = fn() -> String;

/// One recorded command: 32 bytes, no allocation of its own.
#[derive(Clone, Copy)]
pub(super) struct Command {
    /// What it does, for descriptions (and a flag's value).
    pub(super) kind: Kind,
    /// The entity it acts on (a real one or a placeholder), the placeholder
    /// a create makes, or `Entity::PLACEHOLDER` for a unique component's commands.
    pub(super) entity: Entity,
    /// The slot of the queue its value waits in (`NO_QUEUE`: none).
    pub(super) queue: u32,
    /// Carries it out.
    pub(super) apply: Apply,
    /// The component types it names, printed (only for failures and `Debug`).
    pub(super) names: Names,
}

/// What a command does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Create,
    CreateWith,
    Add,
    Replace,
    Remove,
    Destroy,
    SetUnique,
    RemoveUnique,
    SetFlag(bool),
}

impl Command {
    /// A command without a value.
    pub(super) fn new(kind: Kind, entity: Entity, apply: Apply, names: Names) -> Command {
        Command {
            kind,
            entity,
            queue: NO_QUEUE,
            apply,
            names,
        }
    }

    /// Whether it makes an entity (and so a placeholder).
    pub(super) fn creates(&self) -> bool {
        matches!(self.kind, Kind::Create | Kind::CreateWith)
    }

    /// Whether it acts on `entity` (which playback resolves first).
    pub(super) fn targets(&self) -> bool {
        matches!(
            self.kind,
            Kind::Add | Kind::Replace | Kind::Remove | Kind::Destroy | Kind::SetFlag(_)
        )
    }

    /// The entity to report in a failure: the one acted on, or the
    /// placeholder a create makes.
    pub(super) fn named_entity(&self) -> Option<Entity> {
        (self.creates() || self.targets()).then_some(self.entity)
    }

    /// What it does, in words: ``add `Position` to 3v1``.
    pub(super) fn describe(&self) -> String {
        let (entity, names) = (self.entity, self.names);
        match self.kind {
            Kind::Create => format!("create entity {entity}"),
            Kind::CreateWith => format!("create entity {entity} with {}", names()),
            Kind::Add => format!("add {} to {entity}", names()),
            Kind::Replace => format!("replace {} of {entity}", names()),
            Kind::Remove => format!("remove {} from {entity}", names()),
            Kind::Destroy => format!("destroy entity {entity}"),
            Kind::SetUnique => format!("set unique {}", names()),
            Kind::RemoveUnique => format!("remove unique {}", names()),
            Kind::SetFlag(true) => format!("set flag {} on {entity}", names()),
            Kind::SetFlag(false) => format!("clear flag {} on {entity}", names()),
        }
    }
}

/// No names: for commands that name no component.
pub(super) fn no_names() -> String {
    String::new()
}

/// Component `T`'s declared name, quoted: `` `Position` ``.
pub(super) fn component_name<T: Component>() -> String {
    format!("`{}`", T::component_info().name())
}

/// Bundle `B`'s component names, quoted: `` `(Position, Velocity)` ``, or
/// `` `Position` `` for a bundle of one.
pub(super) fn bundle_names<B: Bundle>() -> String {
    let mut names = Vec::new();
    B::for_each_id(|id| names.push(id.name()));
    match names.as_slice() {
        [one] => format!("`{one}`"),
        _ => format!("`({})`", names.join(", ")),
    }
}

pub(super) fn apply_create(_: &Command, step: &mut Step<'_>) -> Applied {
    Ok(Some(step.context.create_entity()))
}

pub(super) fn apply_create_with<B: Bundle>(command: &Command, step: &mut Step<'_>) -> Applied {
    let bundle = step.value::<B>(command);
    step.context.create_entity_with(bundle).map(Some)
}

pub(super) fn create_run<B: Bundle>(
    queues: &mut Queues,
    queue: u32,
    count: usize,
    context: &mut Context,
    created: &mut Vec<Entity>,
) -> bool {
    context.create_quietly(|| queues.drain::<B>(queue, count), created)
}

pub(super) fn apply_add<T: Component>(command: &Command, step: &mut Step<'_>) -> Applied {
    let value = step.value::<T>(command);
    step.context.add(step.target(command)?, value).map(|()| None)
}

pub(super) fn apply_replace<T: Component>(command: &Command, step: &mut Step<'_>) -> Applied {
    let value = step.value::<T>(command);
    step.context.replace(step.target(command)?, value).map(|()| None)
}

pub(super) fn apply_remove<T: Component>(command: &Command, step: &mut Step<'_>) -> Applied {
    step.context.remove::<T>(step.target(command)?).map(|()| None)
}

pub(super) fn apply_destroy(command: &Command, step: &mut Step<'_>) -> Applied {
    step.context.destroy_entity(step.target(command)?).map(|()| None)
}

pub(super) fn apply_set_unique<T: Component>(command: &Command, step: &mut Step<'_>) -> Applied {
    let value = step.value::<T>(command);
    step.context.set_unique(value).map(|_| None)
}

pub(super) fn apply_remove_unique<T: Component>(_: &Command, step: &mut Step<'_>) -> Applied {
    step.context.remove_unique::<T>().map(|()| None)
}

pub(super) fn apply_set_flag<T: Component + Default>(command: &Command, step: &mut Step<'_>) -> Applied {
    let on = matches!(command.kind, Kind::SetFlag(true));
    step.context.set_flag::<T>(step.target(command)?, on).map(|()| None)
}
