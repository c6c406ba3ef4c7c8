"""The rollout guard: after every sweep and on a timer, judge every running
or paused rollout on its arms' counts and hand the registry the verdict."""
