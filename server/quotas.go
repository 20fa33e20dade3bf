package server

// Per-user quotas (WithUserQuotas). Gadgets are counted and created, and
// blueprint versions counted and stored, under Server.quotaMu, so
// concurrent creates and installs cannot pass the limit. An install also
// checks before it compiles, so that a user at the limit is told at once.

import (
	"context"
	"fmt"

	"github.com/gadgetd/gadgetd/internal/store"
)

// createGadget adds g if its owner is under the gadget quota.
func (s *Server) createGadget(ctx context.Context, g store.GadgetRecord) error {
	s.quotaMu.Lock()
	defer s.quotaMu.Unlock()
	have, err := s.store.Gadgets(ctx, g.OwnerID)
	if err != nil {
		return err
	}
	if limit := s.cfg.maxGadgetsPerUser; len(have) >= limit {
		return fmt.Errorf("you have %d gadgets, the limit is %d; remove one first", len(have), limit)
	}
	return s.store.CreateGadget(ctx, g)
}

// checkBlueprintQuota fails if user may install no more blueprint versions.
func (s *Server) checkBlueprintQuota(ctx context.Context, user string) error {
	have, err := s.store.Blueprints(ctx, user)
	if err != nil {
		return err
	}
	if limit := s.cfg.maxBlueprintVersionsPerUser; len(have) >= limit {
		return fmt.Errorf("you have %d blueprint versions installed, the limit is %d; blueprints cannot be removed yet, so ask the operator to raise it", len(have), limit)
	}
	return nil
}

// putBlueprint stores bp if its owner (a user; builtins have no quota) is
// under the blueprint version quota.
func (s *Server) putBlueprint(ctx context.Context, bp store.BlueprintRecord, replace bool) (store.BlueprintRecord, error) {
	if bp.Owner != "" {
		s.quotaMu.Lock()
		defer s.quotaMu.Unlock()
		if err := s.checkBlueprintQuota(ctx, bp.Owner); err != nil {
			return bp, err
		}
	}
	return s.store.PutBlueprint(ctx, bp, replace)
}
